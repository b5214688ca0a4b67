// What a renewal bills (issue 36): the product's price × quantity, less the
// customer's credit. A customer that changed in place has a stored period: its
// renewal bills the plan in force (or the change waiting for the period's end)
// at its product's current price, and the next period is renewPeriod's. One
// that never changed, with no seats and no credit, is billed exactly as before.
import type { ProductRecord } from "../../../shared/contracts/accounts";
import { applyCredit } from "../changes/credit";
import { renewPeriod } from "../changes/proration";
import type { SubscriptionPeriod } from "../changes/subscription-period";
import type { CustomerDoc } from "../documents/customer";
import type { Billed } from "../documents/transaction";
import { creditOf, quantityOf, storedPeriod } from "../plan-changes/customer-period";
import { billedGross, planBilled } from "../pricing/billed";

export interface RenewalBill {
	/** What the card is charged (0: the credit pays it all). */
	amount: number;
	creditUsed: number;
	productId: number;
	/** The period billed with its tax, for the invoice; its end is set once the next renewal is known (renewal-batch.ts). */
	billed: Billed;
	/** What the customer's fields become once it is paid (none for one that never changed and has no credit). */
	changes: Partial<Pick<CustomerDoc, "period" | "credit" | "productId" | "quantity">> | null;
}

/** The product a renewal bills: the one of a change waiting for the period's end, else the customer's. */
export function renewalProductId(customer: CustomerDoc): number {
	return storedPeriod(customer)?.pending?.productId ?? customer.productId;
}

/** What the renewal of `customer` bills, `product` being renewalProductId's: the plan with its tax (pricing/), less the credit. */
export function renewalBill(customer: CustomerDoc, product: ProductRecord): RenewalBill {
	const credit = creditOf(customer);
	const period = storedPeriod(customer);
	const renewed = period && renewPeriod(withPrice(period, product.amountMinor));
	const from = customer.nextRenewalTimestamp ?? new Date();
	if (!renewed?.ok) {
		const billed = planBilled(product, quantityOf(customer), from, null);
		const gross = billedGross(billed);
		const paid = applyCredit(credit, gross);
		if (!paid.ok || credit === 0) return { amount: gross, creditUsed: 0, productId: customer.productId, billed, changes: null };
		const creditUsed = gross - paid.value.charged;
		return { amount: paid.value.charged, creditUsed, productId: customer.productId, billed, changes: { credit: paid.value.creditLeft } };
	}
	const { state } = renewed.value;
	const billed = planBilled({ ...product, id: state.plan.productId }, state.plan.quantity, from, state.end);
	const gross = billedGross(billed);
	const paid = applyCredit(credit, gross);
	const charged = paid.ok ? paid.value.charged : gross;
	const creditLeft = paid.ok ? paid.value.creditLeft : credit;
	return {
		amount: charged,
		creditUsed: gross - charged,
		productId: state.plan.productId,
		billed,
		changes: { period: state, credit: creditLeft, productId: state.plan.productId, quantity: state.plan.quantity },
	};
}

/** The renewing plan at the product's current price (a price the merchant changed since applies from this renewal). */
function withPrice(period: SubscriptionPeriod, unitAmount: number): SubscriptionPeriod {
	return period.pending ? { ...period, pending: { ...period.pending, unitAmount } } : { ...period, plan: { ...period.plan, unitAmount } };
}
