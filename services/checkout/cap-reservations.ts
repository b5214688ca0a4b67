// A checkout's reservation on a capped MID (docs/disputes.md#routing-weights-and-caps):
// billing reserves the first charge's exact amount on the MID's counter for
// the month (billing.reserveMidCap) before the card is checked there, keyed by
// the charge's key, `<attemptId>:charge`. The checkout gives it back itself
// (billing.releaseMidCap) when it ends before its customer is opened with it;
// from then on billing settles it with the customer. A release that fails
// leaves the reservation to billing's review of old ones when the MID is full.
import { isFailure } from "../../shared/call";
import type { CouponTerms, ProductRecord } from "../../shared/contracts/accounts";
import type { CapReservation, FirstPaymentInput } from "../../shared/contracts/billing";
import type { CheckoutDeps } from "./deps";
import type { Sale } from "./mid-routing";

/** The product as billing's first payment steps take it. */
export function paymentProduct(product: ProductRecord): FirstPaymentInput["product"] {
	const { billing, amountMinor, currency, currencyId, trialDays, renewal, authentication, tax } = product;
	return { billing, amountMinor, currency, currencyId, trialDays, renewal, authentication, tax };
}

/** What a checkout charges now, for the MID router; null when it charges nothing now (a hold or a trial). */
export function checkoutSale(deps: CheckoutDeps, product: ProductRecord, coupon: CouponTerms | null, attemptId: string): Sale | null {
	if (product.billing !== "CHARGE") return null;
	return {
		currency: product.currency,
		async reserve(mid) {
			if (!mid.monthlyCap) return { reservation: null };
			const reserved = await deps.call("billing.reserveMidCap", {
				accountId: product.accountId,
				midId: mid.id,
				cap: mid.monthlyCap,
				key: `${attemptId}:charge`,
				productId: product.id,
				product: paymentProduct(product),
				coupon,
			});
			return isFailure(reserved) ? null : reserved;
		},
	};
}

/** Gives a reservation back; best effort. */
export async function releaseReservation(deps: CheckoutDeps, reservation: CapReservation | null): Promise<void> {
	if (reservation) await deps.call("billing.releaseMidCap", reservation).catch(() => undefined);
}
