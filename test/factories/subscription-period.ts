// Periods for the tests of services/billing/changes/rules/: a plan bought at a local
// time in a zone, its first period billed in full.
import { DateTime } from "luxon";
import type { ChangeMode, PlanChange, SubscriptionPeriod } from "../../services/billing/changes/rules/subscription-period";
import type { RenewalPeriod } from "../../shared/contracts/accounts";
import { addPeriod } from "../../shared/time";

export const MONTHLY: RenewalPeriod = { every: 1, unit: "month" };

/** A date from a local ISO date-time in `zone`: `local("2026-04-16T00:00")`. */
export function local(iso: string, zone = "CET"): Date {
	const date = DateTime.fromISO(iso, { zone });
	if (!date.isValid) throw new Error(`not a date: ${iso}`);
	return date.toJSDate();
}

/** A subscription's first period, started at `start` and billed unitAmount × quantity. */
export function firstPeriod(
	start: Date,
	{ productId = 1, unitAmount = 1000, quantity = 1, renewal = MONTHLY, currency = "EUR", zone = "CET" } = {},
): SubscriptionPeriod {
	return {
		currency,
		plan: { productId, unitAmount, quantity, renewal },
		pending: null,
		anchor: start,
		periodIndex: 0,
		start,
		end: addPeriod(start, renewal, zone),
		segments: [{ productId, unitAmount, quantity, from: start }],
		billedForPeriod: unitAmount * quantity,
	};
}

/** A change to another price, monthly in EUR, prorated now unless told. */
export function changeTo(
	unitAmount: number,
	{ productId = 2, quantity = 1, mode = "now_prorated" as ChangeMode, renewal = MONTHLY, currency = "EUR" } = {},
): PlanChange {
	return { productId, unitAmount, quantity, renewal, currency, mode };
}
