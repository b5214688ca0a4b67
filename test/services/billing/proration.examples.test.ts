// Worked examples of services/billing/changes/rules/proration.ts a merchant can check
// by hand; docs/subscriptions.md shows the same numbers. All in CET, amounts in
// cents of EUR. April 2026 has 30 days and no clock change: 2,592,000 s.
import type { ChangeResult } from "../../../services/billing/changes/rules/change-errors";
import { applyCredit } from "../../../services/billing/changes/rules/credit";
import { priceChange, renewPeriod } from "../../../services/billing/changes/rules/proration";
import type { PlanChange, SubscriptionPeriod } from "../../../services/billing/changes/rules/subscription-period";
import { changeTo, firstPeriod, local, MONTHLY } from "../../factories/subscription-period";

const ZONE = "CET";
const APRIL = local("2026-04-01T00:00");

function answerOf<T>(result: ChangeResult<T>): T {
	if (!result.ok) throw new Error(`expected an answer, got ${JSON.stringify(result.error)}`);
	return result.value;
}
const quote = (state: SubscriptionPeriod, change: PlanChange, at: Date) => answerOf(priceChange(state, change, at, ZONE));
const amounts = (lines: { kind: string; amount: number }[]) => lines.map(({ kind, amount }) => [kind, amount]);

describe("Proration, worked examples", () => {
	test("When €10 a month becomes €20 on 16 April (half of a 30-day April), then €5.00 is due: €10.00 for the new plan, €5.00 back for the old", () => {
		// Arrange
		const april = firstPeriod(APRIL, { unitAmount: 1000 });

		// Act
		const result = quote(april, changeTo(2000), local("2026-04-16T00:00"));

		// Assert
		expect({ due: result.due, credit: result.credit }).toEqual({ due: 500, credit: 0 });
		expect(amounts(result.lines)).toEqual([
			["unused_time_credit", -500],
			["new_plan_charge", 1000],
		]);
		expect(result.nextRenewal).toMatchObject({ at: local("2026-05-01T00:00"), amount: 2000, productId: 2 });
		expect(result.state.billedForPeriod).toBe(1500);
	});

	test("When €20 a month becomes €10 on 16 April, then nothing is due and €5.00 becomes the customer's credit", () => {
		// Arrange
		const april = firstPeriod(APRIL, { unitAmount: 2000 });

		// Act
		const result = quote(april, changeTo(1000), local("2026-04-16T00:00"));

		// Assert
		expect({ due: result.due, credit: result.credit }).toEqual({ due: 0, credit: 500 });
		expect(amounts(result.lines)).toEqual([
			["unused_time_credit", -1000],
			["new_plan_charge", 500],
		]);
		expect(result.nextRenewal.amount).toBe(1000);
	});

	test("When a second upgrade follows the first in the same period, then it credits what was paid for the rest of the period at the first upgrade's price", () => {
		// Arrange: €10 → €20 on 16 April (due €5.00)
		const first = quote(firstPeriod(APRIL, { unitAmount: 1000 }), changeTo(2000), local("2026-04-16T00:00"));

		// Act: €20 → €30 on 21 April, 10 days before the end
		const second = quote(first.state, changeTo(3000, { productId: 3 }), local("2026-04-21T00:00"));

		// Assert: the period is worth 10×15/30 + 20×5/30 + 30×10/30 = €18.333… → €18.33; €15.00 was paid
		expect(first.due).toBe(500);
		expect(second.due).toBe(333);
		expect(amounts(second.lines)).toEqual([
			["unused_time_credit", -667],
			["new_plan_charge", 1000],
		]);
		expect(second.state.billedForPeriod).toBe(1833);
	});

	test("When an upgrade follows a change without proration, then the credit is for what was paid (€10 a month), not the list price of the plan in force (€20): the Gumroad bug", () => {
		// Arrange: €10 → €20 on 11 April without proration: nothing due, May at €20
		const unprorated = quote(
			firstPeriod(APRIL, { unitAmount: 1000 }),
			changeTo(2000, { mode: "now_without_proration" }),
			local("2026-04-11T00:00"),
		);

		// Act: → €40 on 21 April, prorated
		const upgrade = quote(unprorated.state, changeTo(4000, { productId: 3 }), local("2026-04-21T00:00"));

		// Assert: April was paid at €10 throughout, so 10 unused days give back €3.33, not €6.67
		expect({ due: unprorated.due, credit: unprorated.credit, lines: unprorated.lines }).toEqual({ due: 0, credit: 0, lines: [] });
		expect(unprorated.nextRenewal).toMatchObject({ at: local("2026-05-01T00:00"), amount: 2000 });
		expect(amounts(upgrade.lines)).toEqual([
			["unused_time_credit", -333],
			["new_plan_charge", 1333],
		]);
		expect(upgrade.due).toBe(1000);
		expect(upgrade.state.billedForPeriod).toBe(2000);
	});

	test("When 1 seat at €12 becomes 5 seats on 11 April (a third of the month), then €32.00 is due: €40.00 for 5 seats over two thirds, €8.00 back for 1", () => {
		// Arrange
		const april = firstPeriod(APRIL, { unitAmount: 1200, quantity: 1 });

		// Act
		const result = quote(april, changeTo(1200, { productId: 1, quantity: 5 }), local("2026-04-11T00:00"));

		// Assert
		expect(result.due).toBe(3200);
		expect(amounts(result.lines)).toEqual([
			["unused_time_credit", -800],
			["new_plan_charge", 4000],
		]);
		expect(result.nextRenewal).toMatchObject({ amount: 6000, quantity: 5 });
	});

	test("When €10 becomes €20 at a third of April and €10 again at two thirds, then the cent the first rounding gave is taken back by the second: €13.33 paid in all", () => {
		// Arrange
		const up = quote(firstPeriod(APRIL, { unitAmount: 1000 }), changeTo(2000), local("2026-04-11T00:00"));

		// Act
		const down = quote(up.state, changeTo(1000, { productId: 1 }), local("2026-04-21T00:00"));

		// Assert: the period is worth 10/3 + 20/3 + 10/3 = €13.333… → €13.33, and 10.00 + 6.67 − 3.34 = 13.33
		expect(up.due).toBe(667);
		expect(amounts(up.lines)).toEqual([
			["unused_time_credit", -666],
			["new_plan_charge", 1333],
		]);
		expect(down.credit).toBe(334);
		expect(amounts(down.lines)).toEqual([
			["unused_time_credit", -667],
			["new_plan_charge", 333],
		]);
		expect(1000 + up.due - down.credit).toBe(1333);
	});

	test("When the change falls in March 2026, whose clocks go forward on the 29th, then the month counts its real 2,674,800 s, not 31 days", () => {
		// Arrange: €31 a month from 1 March; at 16 March, 1,296,000 s have passed and 1,378,800 s remain
		const march = firstPeriod(local("2026-03-01T00:00"), { unitAmount: 3100 });

		// Act
		const result = quote(march, changeTo(6200), local("2026-03-16T00:00"));

		// Assert: 6200 × 1,378,800 / 2,674,800 = 3,195.96… → 3,196; the month is 3100 × 1,296,000 / 2,674,800 + that = 4,697.98… → 4,698
		expect((march.end.getTime() - march.start.getTime()) / 1000).toBe(2_674_800);
		expect(amounts(result.lines)).toEqual([
			["unused_time_credit", -1598],
			["new_plan_charge", 3196],
		]);
		expect(result.due).toBe(1598);
	});

	test("When €10 a month becomes €100 a year on 16 April, then April's unused half (€5.00) is credited against a year charged from 16 April: €95.00 due", () => {
		// Arrange
		const april = firstPeriod(APRIL, { unitAmount: 1000 });

		// Act
		const result = quote(april, changeTo(10000, { renewal: { every: 1, unit: "year" } }), local("2026-04-16T00:00"));

		// Assert
		expect(result.intervalChange).toBe(true);
		expect(amounts(result.lines)).toEqual([
			["unused_time_credit", -500],
			["new_plan_charge", 10000],
		]);
		expect(result.due).toBe(9500);
		expect(result.state).toMatchObject({ start: local("2026-04-16T00:00"), end: local("2027-04-16T00:00"), billedForPeriod: 10000 });
		expect(result.nextRenewal).toMatchObject({ at: local("2027-04-16T00:00"), amount: 10000 });
	});

	test("When a downgrade is asked for at the period's end, then nothing moves now and the renewal on 1 May charges the new plan", () => {
		// Arrange
		const april = firstPeriod(APRIL, { unitAmount: 2000 });

		// Act
		const result = quote(april, changeTo(1000, { mode: "at_period_end" }), local("2026-04-16T00:00"));
		const may = answerOf(renewPeriod(result.state, ZONE));

		// Assert
		expect({ due: result.due, credit: result.credit, lines: result.lines }).toEqual({ due: 0, credit: 0, lines: [] });
		expect(result.state.plan.unitAmount).toBe(2000);
		expect(result.nextRenewal).toMatchObject({ at: local("2026-05-01T00:00"), amount: 1000 });
		expect(may.amount).toBe(1000);
		expect(may.state).toMatchObject({ start: local("2026-05-01T00:00"), end: local("2026-06-01T00:00"), billedForPeriod: 1000 });
	});

	test("When a subscription starts on 31 January, then its renewals fall on the last day of short months and back on the 31st: month ends do not drift", () => {
		// Arrange
		const january = firstPeriod(local("2026-01-31T10:00"), { unitAmount: 1000 });

		// Act
		const february = answerOf(renewPeriod(january, ZONE)).state;
		const march = answerOf(renewPeriod(february, ZONE)).state;

		// Assert
		expect([january.end, february.end, march.end]).toEqual([
			local("2026-02-28T10:00"),
			local("2026-03-31T10:00"),
			local("2026-04-30T10:00"),
		]);
	});

	test("When a customer with €5.00 of credit owes €3.00 and then €8.00, then the first is paid from the credit and the second charges €6.00", () => {
		// Arrange
		const credit = 500;

		// Act
		const first = answerOf(applyCredit(credit, 300));
		const second = answerOf(applyCredit(first.creditLeft, 800));

		// Assert
		expect(first).toEqual({ charged: 0, creditLeft: 200 });
		expect(second).toEqual({ charged: 600, creditLeft: 0 });
		expect(applyCredit(-1, 800)).toEqual({ ok: false, error: { code: "INVALID_AMOUNT", field: "credit", value: -1 } });
	});

	test("When instants have milliseconds, then each is counted at its whole second: a change at 12:00:00.999 costs what one at 12:00:00 does, and a second later one cent less", () => {
		// Arrange: €25,920.00 a month over April's 2,592,000 s is one cent a second; the period starts at 10:15:02.917
		const april = firstPeriod(new Date(local("2026-04-01T10:15:02").getTime() + 917), { unitAmount: 2_592_000 });
		const at = (iso: string, ms = 0) => new Date(local(iso).getTime() + ms);

		// Act: to twice the price, 15 days and 1 h 44 min 58 s (1,302,298 s) after the start at 10:15:02
		const sharp = quote(april, changeTo(5_184_000), at("2026-04-16T12:00:00"));
		const late = quote(april, changeTo(5_184_000), at("2026-04-16T12:00:00", 999));
		const next = quote(april, changeTo(5_184_000), at("2026-04-16T12:00:01"));

		// Assert: 1,289,702 s left; the new plan charges 2 cents a second of them, the old credits 1
		expect(amounts(sharp.lines)).toEqual([
			["unused_time_credit", -1_289_702],
			["new_plan_charge", 2_579_404],
		]);
		expect(amounts(late.lines)).toEqual(amounts(sharp.lines));
		expect(late.due).toBe(sharp.due);
		expect(sharp.due - next.due).toBe(1);
	});
});

describe("Proration, bad input", () => {
	const april = firstPeriod(APRIL, { unitAmount: 1000 });
	const mid = local("2026-04-16T00:00");
	const errorOf = (state: SubscriptionPeriod, change: PlanChange, at: Date) => {
		const result = priceChange(state, change, at, ZONE);
		return result.ok ? null : result.error.code;
	};

	test("When the change is in another currency, then CURRENCY_MISMATCH", () => {
		expect(priceChange(april, changeTo(2000, { currency: "USD" }), mid, ZONE)).toEqual({
			ok: false,
			error: { code: "CURRENCY_MISMATCH", expected: "EUR", got: "USD" },
		});
	});

	test("When the quantity is 0, negative or not whole, then INVALID_QUANTITY", () => {
		expect([0, -1, 1.5].map(quantity => errorOf(april, changeTo(2000, { quantity }), mid))).toEqual([
			"INVALID_QUANTITY",
			"INVALID_QUANTITY",
			"INVALID_QUANTITY",
		]);
	});

	test("When the price is negative or fractional, or times the quantity passes 2^53, then INVALID_AMOUNT or AMOUNT_TOO_LARGE", () => {
		expect(errorOf(april, changeTo(-1), mid)).toBe("INVALID_AMOUNT");
		expect(errorOf(april, changeTo(10.5), mid)).toBe("INVALID_AMOUNT");
		expect(errorOf(april, changeTo(Number.MAX_SAFE_INTEGER, { quantity: 2 }), mid)).toBe("AMOUNT_TOO_LARGE");
	});

	test("When `at` is before the period, at its end or after it, then AT_OUTSIDE_PERIOD", () => {
		expect(
			[local("2026-03-31T23:59:59"), local("2026-05-01T00:00"), local("2026-06-01T00:00")].map(at => errorOf(april, changeTo(2000), at)),
		).toEqual(["AT_OUTSIDE_PERIOD", "AT_OUTSIDE_PERIOD", "AT_OUTSIDE_PERIOD"]);
	});

	test("When `at` is before the period's last change, then AT_BEFORE_LAST_CHANGE", () => {
		const changed = quote(april, changeTo(2000), mid);

		expect(errorOf(changed.state, changeTo(3000), local("2026-04-15T00:00"))).toBe("AT_BEFORE_LAST_CHANGE");
	});

	test("When a change to another interval asks for no proration, then INTERVAL_CHANGE_WITHOUT_PRORATION", () => {
		expect(errorOf(april, changeTo(10000, { renewal: { every: 1, unit: "year" }, mode: "now_without_proration" }), mid)).toBe(
			"INTERVAL_CHANGE_WITHOUT_PRORATION",
		);
	});

	test("When the interval, the mode, `at` or the period is malformed, then an error names it", () => {
		expect(errorOf(april, changeTo(2000, { renewal: { every: 0, unit: "month" } }), mid)).toBe("INVALID_RENEWAL");
		expect(errorOf(april, { ...changeTo(2000), mode: "later" as never }, mid)).toBe("INVALID_MODE");
		expect(errorOf(april, changeTo(2000), new Date(Number.NaN))).toBe("INVALID_DATE");
		expect(errorOf({ ...april, segments: [] }, changeTo(2000), mid)).toBe("INVALID_STATE");
		expect(errorOf({ ...april, end: april.start }, changeTo(2000), mid)).toBe("INVALID_STATE");
		expect(errorOf({ ...april, billedForPeriod: 0.5 }, changeTo(2000), mid)).toBe("INVALID_AMOUNT");
		expect(errorOf({ ...april, plan: { ...april.plan, renewal: MONTHLY, quantity: 0 } }, changeTo(2000), mid)).toBe("INVALID_QUANTITY");
	});
});
