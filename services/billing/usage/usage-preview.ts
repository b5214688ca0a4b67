// GET /api/customer/{id}/usage (docs/usage.md#reading-usage): the current
// period's usage per meter the customer's product prices, and what it would
// bill if the period closed now, priced as its renewal will price it.
import { ApiError, ApiErrorType } from "../../../shared/errors";
import { findCurrency, toDecimal } from "../../../shared/money";
import { ownedBy, raw } from "../../../shared/persistence";
import { formatOptionalDateTime } from "../../../shared/time";
import type { BillingDeps } from "../deps";
import { previewLine, pricedMeters } from "./usage-lines";

/** The preview, or the 404 of a customer unknown or of another account (unlike the spec's GET /api/customer/{id}, a new endpoint's). */
export function foundOrNotFound<T>(preview: T | null): T {
	if (preview === null) throw new ApiError(ApiErrorType.NotFound, "Customer not found");
	return preview;
}

export async function usagePreview(deps: BillingDeps, input: { accountId: number; id: number }) {
	const customer = ownedBy(
		await raw(deps.db.customers).findOne({ _id: input.id }, { projection: { outbox: 0, relayed: 0 } }),
		input.accountId,
	);
	if (!customer) return null;
	const product = await deps.productOf(customer.accountId, customer.productId);
	const prices = product?.usagePrices ?? [];
	const current = prices.length
		? await deps.usage.current({ accountId: customer.accountId, customerId: customer._id, meters: pricedMeters(product!) })
		: null;
	const currency = findCurrency(product?.currency ?? "EUR")!;
	const money = (minor: number) => toDecimal(minor, currency);
	const meters = (current?.usage ?? []).map(usage => {
		const line = previewLine(product!, usage);
		return {
			...line,
			usageAmount: money(line.usageAmount),
			amount: money(line.amount),
			minimumAmount: line.minimumAmount === null ? null : money(line.minimumAmount),
		};
	});
	const total = (current?.usage ?? []).reduce((sum, usage) => sum + previewLine(product!, usage).amount, 0);
	return {
		customerId: customer._id,
		currency: currency.code,
		period: current?.period ?? customer.periodsBilled,
		// As the API prints times: local in TIME_ZONE (docs/api.md).
		periodStart: formatOptionalDateTime(current?.start ? new Date(current.start) : null),
		periodEnd: formatOptionalDateTime(current?.end ? new Date(current.end) : customer.nextRenewalTimestamp),
		meters,
		/** What the period's usage would bill now, before coupon, tax rules and credit (they apply to the renewal's whole charge). */
		amount: money(total),
	};
}
