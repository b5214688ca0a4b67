// Each MID's monthly cap, exact at any number of nodes
// (docs/disputes.md#routing-weights-and-caps). A counter per MID and month
// (mid_caps, `<midId>:<YYYY-MM>`: the month in TIME_ZONE of the service's
// now, as mid_stats counts its days) holds what the month's sales and the
// charges in flight take, by currency. A charge on a capped MID first
// reserves its amount there; the reservation is kept when the charge is made
// and given back when no money moved. Each is ONE conditional update:
//   reserve: {_id, reservations.<key> absent, taken.<cur> <= cap - amount} -> $inc taken, $set reservations.<key>
//   keep:    {_id, reservations.<key>.amount = reserved} -> $inc taken (charged - reserved), $unset reservations.<key>
//   release: {_id, reservations.<key>.amount = reserved} -> $inc taken -reserved, $unset reservations.<key>
// so `taken` never passes the cap through a reservation. Keyed by the
// charge's idempotency key: a repeated reservation answers the one made, a
// repeated keep or release changes nothing, and a keep never counts a charge
// whose reservation is gone. A month's counter of a currency starts from the
// sales mid_stats counted that month before it (a cap set mid-month).
// Crash points: what settles a charge keeps or releases its reservation
// (subscriptions/checkout-cap.ts, the checkout recovery, the renewal batch).
// One nobody settles (its node died between the reservation and the
// outcome's record) is found when its MID is full: a reservation older than
// MID_CAP_REVIEW_MS is kept or given back by what the processor says of its
// key (payments.lookup), so none takes the cap for good.
import { config } from "../../../shared/config";
import type { CapReservation } from "../../../shared/contracts/billing";
import { isDuplicateKey, raw } from "../../../shared/persistence";
import type { BillingDeps } from "../deps";
import type { HeldReservation, MidCapDoc } from "../records/counters";
import { monthVolumes } from "./mid-health";
import { monthOf } from "./mid-stats";

/** A reservation's field in its counter: its key, with what a field name cannot hold (`.`, `$`) as `_`. */
const slotOf = (key: string) => key.replace(/[.$]/g, "_");
const counterOf = (reservation: Pick<CapReservation, "midId" | "period">) => `${reservation.midId}:${reservation.period}`;

export interface ReserveRequest {
	midId: number;
	/** The cap in minor units of `currency`; null: counted whatever it takes (the capture of a PREAUTHORIZE hold, placed already). */
	capMinor: number | null;
	currency: string;
	amount: number;
	/** The charge's idempotency key. */
	key: string;
	/** When the charge is made, in its account's time: its month's counter. */
	at: Date;
}

/** One conditional update: the reservation, if it is not there yet and the cap has room for it. */
async function take(deps: Pick<BillingDeps, "db">, reservation: CapReservation, capMinor: number | null): Promise<boolean> {
	const taken = `taken.${reservation.currency}`;
	const slot = `reservations.${slotOf(reservation.key)}`;
	const room = capMinor === null ? { $exists: true } : { $lte: capMinor - reservation.amount };
	const held: HeldReservation = { key: reservation.key, amount: reservation.amount, currency: reservation.currency, at: new Date() };
	const done = await raw(deps.db.midCaps).updateOne(
		{ _id: counterOf(reservation), [slot]: { $exists: false }, [taken]: room },
		{ $inc: { [taken]: reservation.amount }, $set: { [slot]: held } },
	);
	return done.modifiedCount === 1;
}

/** The month's counter of the currency, started from the MID's sales mid_stats counted this month; once. */
async function startCounter(deps: BillingDeps, reservation: CapReservation): Promise<void> {
	const sold =
		(await monthVolumes(deps, { midIds: [reservation.midId], month: reservation.period }))[reservation.midId]?.[reservation.currency] ?? 0;
	const taken = `taken.${reservation.currency}`;
	await raw(deps.db.midCaps)
		.updateOne(
			{ _id: counterOf(reservation), [taken]: { $exists: false } },
			{ $set: { [taken]: sold }, $setOnInsert: { midId: reservation.midId, month: reservation.period, reservations: {} } },
			{ upsert: true },
		)
		.catch(err => {
			// Started by another node meanwhile.
			if (!isDuplicateKey(err)) throw err;
		});
}

/** Reserves `amount` of the MID's cap for the charge `key`, in its month: the reservation, or null when the cap has no room. */
export async function reserveCap(deps: BillingDeps, request: ReserveRequest): Promise<CapReservation | null> {
	const { midId, currency, amount, key, capMinor } = request;
	const reservation: CapReservation = { midId, period: monthOf(request.at), key, amount, currency };
	if (capMinor !== null && amount > capMinor) return null;
	if (await take(deps, reservation, capMinor)) return reservation;
	let doc = await deps.db.midCaps.findById(counterOf(reservation)).lean();
	if (doc?.taken?.[currency] === undefined) {
		await startCounter(deps, reservation);
		if (await take(deps, reservation, capMinor)) return reservation;
		doc = await deps.db.midCaps.findById(counterOf(reservation)).lean();
	}
	// A repeat (a renewal taken over, a retried request): the reservation made the first time.
	const made = doc?.reservations?.[slotOf(key)];
	if (made) return { ...reservation, amount: made.amount };
	if (doc && (await reviewStale(deps, doc)) && (await take(deps, reservation, capMinor))) return reservation;
	return null;
}

/** The charge was made, for `charged` (what was reserved: every reservation is of the charge's exact amount): the reservation is a sale. */
export async function keepCap(deps: Pick<BillingDeps, "db">, reservation: CapReservation, charged = reservation.amount): Promise<void> {
	const slot = `reservations.${slotOf(reservation.key)}`;
	await raw(deps.db.midCaps).updateOne(
		{ _id: counterOf(reservation), [`${slot}.amount`]: reservation.amount },
		{ $inc: { [`taken.${reservation.currency}`]: charged - reservation.amount }, $unset: { [slot]: "" } },
	);
}

/** No money moved for the charge: its reservation is given back. True when this call gave it back. */
export async function releaseCap(deps: Pick<BillingDeps, "db">, reservation: CapReservation): Promise<boolean> {
	const slot = `reservations.${slotOf(reservation.key)}`;
	const done = await raw(deps.db.midCaps).updateOne(
		{ _id: counterOf(reservation), [`${slot}.amount`]: reservation.amount },
		{ $inc: { [`taken.${reservation.currency}`]: -reservation.amount }, $unset: { [slot]: "" } },
	);
	return done.modifiedCount === 1;
}

/**
 * A sale made without a reservation (a card update's payment of a renewal owed, which caps do not route): counted on
 * the MID's counter of the month if it has one (a counter started later counts it from mid_stats).
 */
export async function countOnCap(deps: Pick<BillingDeps, "db">, sale: { midId: number; currency: string; amount: number; at: Date }) {
	const taken = `taken.${sale.currency}`;
	await raw(deps.db.midCaps).updateOne(
		{ _id: counterOf({ midId: sale.midId, period: monthOf(sale.at) }), [taken]: { $exists: true } },
		{ $inc: { [taken]: sale.amount } },
	);
}

/**
 * Settles the counter's reservations older than MID_CAP_REVIEW_MS (real time: how long a charge can take) by the
 * processor's answer to their key: kept when it was approved, given back when nothing moved, left while it cannot
 * tell. True when one was given back.
 */
async function reviewStale(deps: BillingDeps, doc: MidCapDoc): Promise<boolean> {
	const before = Date.now() - config().midCapReviewMs;
	let released = false;
	for (const held of Object.values(doc.reservations ?? {})) {
		if (new Date(held.at).getTime() > before) continue;
		const reservation: CapReservation = {
			midId: doc.midId,
			period: doc.month,
			key: held.key,
			amount: held.amount,
			currency: held.currency,
		};
		const outcome = await deps.payments.lookup(held.key).catch(() => "later" as const);
		if (outcome === "later" || outcome?.status === "ERROR") continue;
		if (outcome?.status === "APPROVED") await keepCap(deps, reservation);
		else released = (await releaseCap(deps, reservation)) || released;
	}
	return released;
}
