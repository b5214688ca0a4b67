// A customer's coupon against the accounts service's redemption count
// (services/accounts/coupons.ts): the checkout took the redemption before the
// payment; billing keeps it when the first payment is approved and gives it
// back when it is declined or abandoned, by the checkout or by the checkout
// recovery after a crash. Both are keyed by the customer, so settling twice
// changes nothing. The coupon is on the PENDING customer from its insert, so
// whatever settles it knows what to give back.
import type { BillingDeps } from "../deps";
import type { CustomerCoupon } from "./discount";

/** A customer as these read it (records/ imports this folder's types, so this folder names none of its). */
interface CouponHolder {
	_id: number;
	coupon?: CustomerCoupon | null;
}

/** The first payment was approved: the redemption is kept. Best effort: a lost confirmation only leaves its customer named as pending. */
export async function confirmCoupon(deps: BillingDeps, customer: CouponHolder): Promise<void> {
	if (!customer.coupon) return;
	await deps.coupons.confirm({ couponId: customer.coupon.couponId, customerId: customer._id }).catch(() => undefined);
}

/** The first payment ended unpaid: the redemption is given back before the customer's settlement, so a crash in between repeats it. */
export async function releaseCoupon(deps: BillingDeps, customer: CouponHolder): Promise<void> {
	if (!customer.coupon) return;
	await deps.coupons.release({ couponId: customer.coupon.couponId, customerId: customer._id });
}
