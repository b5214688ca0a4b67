// A checkout's reservation on a capped MID (mid-stats/cap-reservations.ts,
// docs/disputes.md#routing-weights-and-caps). The checkout node reserves its
// first charge's exact amount (the price, less the coupon, with its tax:
// first-charge.ts) before it checks the card on the MID, and gives it back
// itself if the checkout ends before its customer is opened. From then on
// the reservation is on the PENDING customer (`capReservation`), and whatever
// settles the customer settles it: kept when the charge is approved, given
// back before the customer is DECLINED or ABANDONED, so the checkout
// recovery repeats a release a crash cut off. A reservation is keyed by the
// charge's key, so doing either twice changes nothing.

import { type CapReservation, type CheckoutCapInput, MidCapError } from "../../../shared/contracts/billing";
import { findCurrency, toMinorUnits } from "../../../shared/money";
import { periodsOf } from "../coupons/discount";
import type { BillingDeps } from "../deps";
import { keepCap, releaseCap, reserveCap } from "../mid-stats/cap-reservations";
import { firstCharge } from "./first-charge";

/** billing.reserveMidCap: the reservation (null when no cap applies to the charge), or CAP_REACHED. */
export async function reserveForCheckout(
	deps: BillingDeps,
	input: CheckoutCapInput,
): Promise<{ reservation: CapReservation | null } | MidCapError> {
	const { product, cap } = input;
	const currency = findCurrency(cap.currency);
	if (!currency || cap.currency !== product.currency || product.billing !== "CHARGE") return { reservation: null };
	const coupon = input.coupon ? { ...input.coupon, periodsLeft: periodsOf(input.coupon) } : null;
	// The first charge is made at the account's now: its month's counter.
	const at = await deps.clocks.now(input.accountId);
	const { amount } = firstCharge({ productId: input.productId, coupon }, product, at);
	const capMinor = toMinorUnits(cap.amount, currency);
	if (amount === 0 || typeof capMinor !== "number") return { reservation: null };
	const reservation = await reserveCap(deps, { midId: input.midId, capMinor, currency: cap.currency, amount, key: input.key, at });
	return reservation ? { reservation } : MidCapError.Reached;
}

/** billing.releaseMidCap: the checkout ended before its customer took the reservation. */
export async function releaseForCheckout(deps: BillingDeps, reservation: CapReservation): Promise<{ released: boolean }> {
	return { released: await releaseCap(deps, reservation) };
}

/** The customer's first charge was approved for `charged` minor units: its reservation is a sale. */
export async function keepCustomerCap(
	deps: BillingDeps,
	customer: { capReservation?: CapReservation | null },
	charged: number,
): Promise<void> {
	if (customer.capReservation) await keepCap(deps, customer.capReservation, charged);
}

/** The customer's first payment ended unpaid: its reservation is given back (before its settlement, so a crash repeats it). */
export async function releaseCustomerCap(deps: BillingDeps, customer: { capReservation?: CapReservation | null }): Promise<void> {
	if (customer.capReservation) await releaseCap(deps, customer.capReservation);
}
