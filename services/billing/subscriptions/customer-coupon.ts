// A merchant attaches a coupon to an existing customer, or removes it
// (POST and DELETE /api/customer/{id}/coupon, docs/coupons.md). It applies
// from the customer's next charge. The redemption is taken first (keyed by
// the customer, so a repeat after a lost answer takes nothing more), then the
// coupon is written on the customer while no renewal holds it (its lease
// free), then the redemption is kept. A crash between the first two leaves a
// redemption taken and not used, never a discount not counted.
import { isFailure } from "../../../shared/call";
import type { CouponError } from "../../../shared/contracts/accounts";
import type { CustomerView } from "../../../shared/contracts/billing";
import { leaseFree, ownedBy } from "../../../shared/persistence";
import { periodsOf } from "../coupons/discount";
import type { BillingDeps } from "../deps";
import { countUpdate } from "../entries/customer-entry";
import { scheduledEvent } from "../outbox/outbox";
import type { CustomerDoc } from "../records/customer";
import { METRICS_ONLY } from "../records/outbox-event";
import { waitForRenewalInFlight } from "../renewal-lease";
import { CustomerStatus } from "../states";
import { toCustomerView } from "../views";

export enum CustomerCouponError {
	CustomerNotFound = "CUSTOMER_NOT_FOUND",
	/** Only a subscription that will be charged again takes a coupon: ACTIVE, PAUSED or SUSPENDED. */
	NotChargeable = "CUSTOMER_NOT_CHARGEABLE",
	/** Send couponId or promotionCode: exactly one. */
	OneCoupon = "ONE_COUPON",
	/** A renewal took the customer meanwhile: nothing changed; send it again. */
	Busy = "CUSTOMER_BUSY",
}

const CHARGEABLE = [CustomerStatus.Active, CustomerStatus.Paused, CustomerStatus.Suspended];

async function chargeableCustomer(deps: BillingDeps, accountId: number, id: number) {
	const customer = ownedBy(await deps.db.customers.findById(id).lean(), accountId);
	if (!customer) return CustomerCouponError.CustomerNotFound;
	return CHARGEABLE.includes(customer.status) ? customer : CustomerCouponError.NotChargeable;
}

/**
 * Writes the coupon on the customer once no renewal holds it, while it is as read (what the update counts in the
 * metrics depends on it: a METRICS event carries it); Busy when it changed meanwhile.
 */
async function writeWhileFree(deps: BillingDeps, customer: CustomerDoc, coupon: CustomerDoc["coupon"]) {
	await waitForRenewalInFlight(deps, customer._id);
	const { counted, entry } = await countUpdate(deps, customer, { coupon }, { at: await deps.clocks.now(customer.accountId) });
	const metrics = entry ? await scheduledEvent(deps, "c", customer._id, METRICS_ONLY, { metrics: entry }) : null;
	const filter = {
		_id: customer._id,
		status: customer.status,
		periodsBilled: customer.periodsBilled,
		productId: customer.productId,
		...leaseFree("renewalLease", deps.now()),
	};
	const update = { $set: { coupon, counted }, ...(metrics ? { $push: { outbox: metrics } } : {}) };
	const doc = await deps.db.customers.findOneAndUpdate(filter, update, { returnDocument: "after" }).lean();
	return doc ?? CustomerCouponError.Busy;
}

export async function attachCoupon(
	deps: BillingDeps,
	input: { accountId: number; id: number; couponId?: number; promotionCode?: string },
): Promise<CustomerView | CustomerCouponError | CouponError> {
	if ((input.couponId === undefined) === (input.promotionCode === undefined)) return CustomerCouponError.OneCoupon;
	const customer = await chargeableCustomer(deps, input.accountId, input.id);
	if (typeof customer === "string") return customer;
	const ref = input.couponId !== undefined ? { couponId: input.couponId } : { code: input.promotionCode };
	const terms = await deps.coupons.find({ accountId: input.accountId, productId: customer.productId, ...ref });
	if (isFailure(terms)) return terms.error;
	// The same coupon again (a repeat after a lost answer): as it is.
	if (customer.coupon?.couponId === terms.couponId) return toCustomerView(customer);
	const taken = await deps.coupons.redeem({ accountId: input.accountId, couponId: terms.couponId, customerId: customer._id });
	if (isFailure(taken)) return taken.error;
	const written = await writeWhileFree(deps, customer, { ...terms, periodsLeft: periodsOf(terms) });
	if (typeof written === "string") {
		await deps.coupons.release({ couponId: terms.couponId, customerId: customer._id });
		return written;
	}
	await deps.coupons.confirm({ couponId: terms.couponId, customerId: customer._id }).catch(() => undefined);
	return toCustomerView(written);
}

/** The customer's coupon ends now: its next charges are at list price. Its redemption is not given back. */
export async function removeCoupon(
	deps: BillingDeps,
	input: { accountId: number; id: number },
): Promise<CustomerView | CustomerCouponError> {
	const customer = ownedBy(await deps.db.customers.findById(input.id).lean(), input.accountId);
	if (!customer) return CustomerCouponError.CustomerNotFound;
	if (!customer.coupon) return toCustomerView(customer);
	const written = await writeWhileFree(deps, customer, null);
	return typeof written === "string" ? written : toCustomerView(written);
}
