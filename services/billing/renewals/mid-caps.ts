// A renewal keeps its MID unless the MID is inactive or its monthly cap has
// no room; it then moves to another MID of its group that takes the card's
// brand and has room (docs/disputes.md#routing). Room is reserved on the
// MID's counter for the month before the charge (mid-stats/cap-reservations.ts,
// one conditional update), under the renewal's key, so cycles on any number
// of billing nodes never pass a cap together. The batch keeps or gives back
// each reservation once its customer has moved on (settleCaps); a node that
// takes over a renewal whose node died reserves again under the same key and
// gets the reservation already made, and one nobody settles is reviewed by
// the processor's answer to its key when the MID is full.
import type { MerchantAccountView, RenewalTerms } from "../../../shared/contracts/accounts";
import type { CapReservation } from "../../../shared/contracts/billing";
import type { PaymentOutcome } from "../../../shared/contracts/payments";
import { findCurrency, toMinorUnits } from "../../../shared/money";
import type { BillingDeps } from "../deps";
import { keepCap, releaseCap, reserveCap } from "../mid-stats/cap-reservations";
import type { CustomerDoc } from "../records/customer";

/** A MID taken for a renewal, and its cap's reservation (null when no cap applies to the charge). */
export interface TakenMid {
	mid: Pick<MerchantAccountView, "id" | "name">;
	reservation: CapReservation | null;
}

export interface CapTracker {
	/**
	 * Reserves `amountMinor` of the MID's cap for the charge `key` made `at` (its account's time): `{reservation}` (null
	 * when the MID has no cap in that currency), or null when the cap has no room. `force`: counted whatever the cap (a
	 * hold's capture).
	 */
	take(
		mid: MerchantAccountView,
		charge: { amountMinor: number; currency: string; key: string; at: Date },
		force?: boolean,
	): Promise<{ reservation: CapReservation | null } | null>;
	/** The charge was made for `chargedMinor` (kept), or moved no money (null: given back). */
	settle(reservation: CapReservation, chargedMinor: number | null): Promise<void>;
}

export function createCapTracker(deps: BillingDeps): CapTracker {
	return {
		async take(mid, { amountMinor, currency, key, at }, force = false) {
			const cap = mid.monthlyCap;
			if (!cap || cap.currency !== currency || amountMinor === 0) return { reservation: null };
			const capMinor = toMinorUnits(cap.amount, findCurrency(cap.currency)!) as number;
			const reservation = await reserveCap(deps, {
				midId: mid.id,
				capMinor: force ? null : capMinor,
				currency,
				amount: amountMinor,
				key,
				at,
			});
			return reservation ? { reservation } : null;
		},
		async settle(reservation, chargedMinor) {
			if (chargedMinor === null) await releaseCap(deps, reservation);
			else await keepCap(deps, reservation, chargedMinor);
		},
	};
}

/** Another MID of the group the customer's renewal may move to: active, taking new sales and its card, not one that refused it. */
export const mayMoveTo = (customer: Pick<CustomerDoc, "midId" | "cardType" | "refusedMids">, mid: MerchantAccountView) =>
	mid.id !== customer.midId &&
	mid.active &&
	mid.weight > 0 &&
	mid.cardTypes.includes(customer.cardType as never) &&
	!customer.refusedMids?.includes(mid.id);

/**
 * The MID a renewal of `amountMinor` (what the card is charged: seats and credit counted) charges on, with its
 * reservation: its own, or the first other MID of the group that may take it; null when none may. A hold's capture
 * stays on the MID that placed it, and counts toward its cap whatever it takes.
 */
export async function renewalMid(
	customer: CustomerDoc,
	terms: RenewalTerms,
	caps: CapTracker,
	charge: { amountMinor: number; key: string; at: Date },
): Promise<TakenMid | null> {
	const made = { ...charge, currency: terms.product.currency };
	const own = terms.merchantAccounts.find(m => m.id === customer.midId);
	if (customer.authorizationId !== null) {
		const taken = own ? await caps.take(own, made, true) : null;
		return { mid: { id: customer.midId, name: customer.midName }, reservation: taken?.reservation ?? null };
	}
	for (const mid of [...(own?.active ? [own] : []), ...terms.merchantAccounts.filter(m => mayMoveTo(customer, m))]) {
		const taken = await caps.take(mid, made);
		if (taken) return { mid, reservation: taken.reservation };
	}
	return null;
}

/** After the batch moved its customers on: each renewal's reservation kept for an approved charge, given back otherwise. */
export async function settleCaps(
	caps: CapTracker,
	charged: { reservation?: CapReservation | null; outcome: PaymentOutcome; bill: { amount: number } }[],
): Promise<void> {
	for (const item of charged) {
		if (item.reservation) await caps.settle(item.reservation, item.outcome.status === "APPROVED" ? item.bill.amount : null);
	}
}
