// What a subscription's change in place works on (issue 36): the current
// period, the prices it has been billed at so far, and what was charged for
// it. Plain data, no I/O: the billing service will read it from the customer
// record and write back the state a quote returns.
import type { RenewalPeriod } from "../../../../shared/contracts/accounts";

/** One product at one price and quantity: `unitAmount` is in minor units of the period's currency, after any discount. */
export interface PlanPrice {
	productId: number;
	unitAmount: number;
	quantity: number;
}

/** A price and how often it renews: what a subscription is on, or will be on. */
export interface Plan extends PlanPrice {
	renewal: RenewalPeriod;
}

/** A price the period is billed at from `from` until the next segment's `from` (or the period's end). */
export interface PlanSegment extends PlanPrice {
	from: Date;
}

/**
 * The coupon a period's charges were discounted by (docs/coupons.md): the period's value counts at its list value
 * less coupons/discount.ts's discountFor of it, so a change prorates what the buyer paid after the discount.
 */
export interface PeriodDiscount {
	percentOff: number | null;
	amountOff: number | null;
}

/**
 * A subscription's current period.
 *
 * - `plan` is in force now and renews at `end` unless `pending` replaces it
 *   there; `plan.renewal` is this period's interval.
 * - `segments` are the prices this period has been billed at, in time order,
 *   the first from `start`. They are what the buyer paid for, which is not
 *   always the plan in force: after a change without proration the period
 *   stays billed at the earlier price until it ends.
 * - `billedForPeriod` is what was charged for this period so far, net of what
 *   was credited back for it (minor units). After every change it equals the
 *   period's total rounded once (proration.ts).
 * - `discount`, when set, is the coupon its charges were discounted by:
 *   the period's value is its list value less that coupon's discount of it,
 *   and `billedForPeriod` was paid after it (absent or null: none).
 * - Period n of an interval runs from anchor + n intervals to anchor + n + 1
 *   intervals (`periodIndex` is n), as the renewals schedule them: month ends
 *   do not drift (31 Jan, 28 Feb, 31 Mar). Right after a resume n is -1: the
 *   period ends at the anchor the resume set.
 */
export interface SubscriptionPeriod {
	currency: string;
	plan: Plan;
	pending: Plan | null;
	anchor: Date;
	periodIndex: number;
	start: Date;
	end: Date;
	segments: PlanSegment[];
	billedForPeriod: number;
	discount?: PeriodDiscount | null;
}

export const CHANGE_MODES = ["now_prorated", "now_without_proration", "at_period_end"] as const;
export type ChangeMode = (typeof CHANGE_MODES)[number];

/**
 * A change asked for: the new product's price (after discount), quantity and
 * interval, and when it takes effect. `now_prorated`: from `at`, the unused
 * time credited and the new plan charged; `now_without_proration`: from `at`,
 * nothing charged or credited now, the next renewal at the new price;
 * `at_period_end`: nothing now, the new plan from the next renewal.
 */
export interface PlanChange extends Plan {
	currency: string;
	mode: ChangeMode;
	/** The coupon a new period this change starts (another interval, now) is discounted by; absent or null: none. */
	discount?: PeriodDiscount | null;
}
