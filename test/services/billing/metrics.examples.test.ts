// Worked examples of services/billing/entries/ a merchant's accountant can check by hand; docs/metrics.md shows the
// same numbers. Amounts in cents of EUR; days in CET (the service's TIME_ZONE in the tests).
import { customerEntry } from "../../../services/billing/entries/metrics-entries";
import { monthlyAmount } from "../../../services/billing/entries/monthly-amount";
import { type Movement, movementsBetween } from "../../../services/billing/entries/mrr-movements";
import {
	type Contribution,
	contributionOf,
	mrrOf,
	type SubscriptionState,
	subscriptionState,
} from "../../../services/billing/entries/subscription-state";
import { type VolumeFigure, volumeOf } from "../../../services/billing/entries/volume";
import { dayOf } from "../../../services/billing/mid-stats/mid-stats";
import { CustomerStatus, TransactionStatus, TransactionType } from "../../../services/billing/states";
import { netVolume } from "../../../services/metrics/window-figures";
import { averageRevenuePerSubscriber, churnRate, recoveryRate } from "../../../services/metrics/window-rates";
import { monthKey } from "../../../shared/contracts/metrics";
import { BASIC, coupon, MARCH_OPENING, MARCH_STORY, PRO, paying, TEAM } from "../../factories/metrics-march";
import { local } from "../../factories/subscription-period";

describe("Normalising to a month", () => {
	test.each([
		["€10.00 a month", 1000, { every: 1, unit: "month" }, 1000],
		["€100.00 a year: 833.33…, rounded down", 10_000, { every: 1, unit: "year" }, 833],
		["€6.00 a week: × 52 ÷ 12", 600, { every: 1, unit: "week" }, 2600],
		["€1.00 a day: × 365 ÷ 12 = 30.416…", 100, { every: 1, unit: "day" }, 3042],
		["€30.00 every 3 months", 3000, { every: 3, unit: "month" }, 1000],
		["€10.00 every 2 weeks: 21.666…, rounded up", 1000, { every: 2, unit: "week" }, 2167],
		["€0.06 a year: 0.5 cent, half up", 6, { every: 1, unit: "year" }, 1],
		["nothing", 0, { every: 1, unit: "month" }, 0],
	] as const)("When a price is %s, then its month's worth is its MRR", (_name, amount, renewal, expected) => {
		expect(monthlyAmount(amount, renewal)).toBe(expected);
	});
});

describe("A subscription's MRR", () => {
	test.each([
		["1 seat of €10.00 a month", paying(BASIC), 1000],
		["3 seats of €10.00 a month", paying(BASIC, { quantity: 3 }), 3000],
		["20 % off its next 2 charges", paying(BASIC, { coupon: coupon({ periodsLeft: 2 }) }), 800],
		[
			"a coupon used up (a `once` coupon after the first charge)",
			paying(BASIC, { coupon: coupon({ duration: "once", periodsLeft: 0 }) }),
			1000,
		],
		[
			"€3.00 off for ever on 2 seats",
			paying(BASIC, { quantity: 2, coupon: coupon({ percentOff: null, amountOff: 300, duration: "forever", periodsLeft: null }) }),
			1700,
		],
		["a coupon for another product", paying(BASIC, { coupon: coupon({ periodsLeft: 2, productIds: [2] }) }), 1000],
		["100 % off for ever", paying(BASIC, { coupon: coupon({ percentOff: 100, duration: "forever", periodsLeft: null }) }), 0],
		["€12.00 with 20 % tax included: €10.00 net", paying({ ...BASIC, amountMinor: 1200, tax: { rateBps: 2000, inclusive: true } }), 1000],
		["€10.00 with 20 % tax added: €10.00 net", paying({ ...BASIC, tax: { rateBps: 2000, inclusive: false } }), 1000],
		[
			"€100.00 a year, 20 % off, 20 % tax included: 8,000 ÷ 1.2 ÷ 12",
			paying({ ...PRO, tax: { rateBps: 2000, inclusive: true } }, { coupon: coupon({ periodsLeft: 1 }) }),
			556,
		],
	] as const)("When a customer pays %s, then its MRR is its price net of tax, a month's worth", (_name, state, expected) => {
		expect(mrrOf(state)).toBe(expected);
		expect(contributionOf(state)).toMatchObject({ standing: "subscriber", mrr: expected });
	});

	test.each([
		["in a trial (nothing charged yet)", paying(BASIC, { periodsBilled: 0 }), "none", null],
		["a one-off product", paying({ ...BASIC, renewal: null }), "none", null],
		["declined at checkout", paying(BASIC, { status: CustomerStatus.Declined, periodsBilled: 0 }), "none", null],
		["paused", paying(BASIC, { status: CustomerStatus.Paused }), "lapsed", "paused"],
		["paused in its trial", paying(BASIC, { status: CustomerStatus.Paused, periodsBilled: 0 }), "none", null],
		["suspended after declines", paying(BASIC, { status: CustomerStatus.Suspended }), "lapsed", "suspended"],
		["unsubscribed by the merchant", paying(BASIC, { status: CustomerStatus.Unsubscribed }), "lapsed", "unsubscribed"],
		[
			"unsubscribed by the dispute protection",
			paying(BASIC, { status: CustomerStatus.Unsubscribed, endedBy: "dispute" }),
			"lapsed",
			"disputed",
		],
		["unsubscribed in its trial", paying(BASIC, { status: CustomerStatus.Unsubscribed, periodsBilled: 0 }), "none", null],
	] as const)("When a customer is %s, then it is no subscriber and adds no MRR", (_name, state, standing, cause) => {
		expect(contributionOf(state)).toEqual({ standing, cause, currency: "EUR", productId: state.product.id, mrr: 0 });
	});
});

describe("A stored customer's state", () => {
	test("When a customer document on 2 seats with a coupon is read with its product, then its state has them, and the dispute that ended it is its churn cause", () => {
		// Arrange: the fields billing stores (records/customer.ts)
		const stored = { status: CustomerStatus.Active, periodsBilled: 4, quantity: 2, coupon: coupon({ periodsLeft: 1 }) };

		// Act
		const active = contributionOf(subscriptionState(stored, BASIC));
		const ended = contributionOf(subscriptionState({ ...stored, status: CustomerStatus.Unsubscribed }, BASIC, "dispute"));

		// Assert
		expect(active).toEqual({ standing: "subscriber", cause: null, currency: "EUR", productId: 1, mrr: 1600 });
		expect(ended).toEqual({ standing: "lapsed", cause: "disputed", currency: "EUR", productId: 1, mrr: 0 });
	});
});

describe("Movements", () => {
	const kinds = (movements: Movement[]) => movements.map(m => [m.productId, m.kind, m.mrr, m.subscribers, m.cause]);
	const of = (state: SubscriptionState) => contributionOf(state);
	/** The same movement in the product's scope and in its currency's total. */
	const inBoth = (productId: number, kind: string, mrr: number, subscribers: number, cause: string | null = null) => [
		[productId, kind, mrr, subscribers, cause],
		["all", kind, mrr, subscribers, cause],
	];

	test.each([
		["a first charge", null, of(paying(BASIC)), inBoth(1, "new", 1000, 1)],
		["a trial's first charge", of(paying(BASIC, { periodsBilled: 0 })), of(paying(BASIC)), inBoth(1, "new", 1000, 1)],
		["a trial that starts", null, of(paying(BASIC, { periodsBilled: 0 })), []],
		["1 seat to 3", of(paying(BASIC)), of(paying(BASIC, { quantity: 3 })), inBoth(1, "expansion", 2000, 0)],
		[
			"a coupon's last discounted charge",
			of(paying(BASIC, { coupon: coupon({ periodsLeft: 1 }) })),
			of(paying(BASIC, { coupon: coupon({ periodsLeft: 0 }) })),
			inBoth(1, "expansion", 200, 0),
		],
		["a renewal that changes nothing", of(paying(BASIC)), of(paying(BASIC, { periodsBilled: 2 })), []],
		["a pause", of(paying(TEAM)), of(paying(TEAM, { status: CustomerStatus.Paused })), inBoth(3, "churned", -2600, -1, "paused")],
		["a resume", of(paying(TEAM, { status: CustomerStatus.Paused })), of(paying(TEAM)), inBoth(3, "reactivated", 2600, 1)],
		[
			"a suspension",
			of(paying(BASIC)),
			of(paying(BASIC, { status: CustomerStatus.Suspended })),
			inBoth(1, "churned", -1000, -1, "suspended"),
		],
		[
			"a card update that pays a suspended customer",
			of(paying(BASIC, { status: CustomerStatus.Suspended })),
			of(paying(BASIC)),
			inBoth(1, "reactivated", 1000, 1),
		],
		[
			"a paused customer unsubscribed (it churned at the pause)",
			of(paying(BASIC, { status: CustomerStatus.Paused })),
			of(paying(BASIC, { status: CustomerStatus.Unsubscribed })),
			[],
		],
		[
			"a trial's first charge declined to suspension",
			of(paying(BASIC, { periodsBilled: 0 })),
			of(paying(BASIC, { status: CustomerStatus.Suspended, periodsBilled: 0 })),
			[],
		],
		[
			"Basic (€10.00) to Pro (€8.33)",
			of(paying(BASIC)),
			of(paying(PRO)),
			[
				[1, "contraction", -1000, -1, null],
				["all", "contraction", -167, 0, null],
				[2, "expansion", 833, 1, null],
			],
		],
	] as const)("When a customer has %s, then the movements are exactly those", (_name, before, after, expected) => {
		expect(kinds(movementsBetween(before as Contribution | null, after))).toEqual(expected);
	});
});

describe("The worked example of docs/metrics.md: March 2026", () => {
	/** The counters of the EUR total, by day: each movement added to the day of its time, as the next session will. */
	function countersOfMarch() {
		const days = new Map<string, Movement[]>();
		const states = new Map(Object.entries(MARCH_OPENING).map(([name, state]) => [name, contributionOf(state)]));
		for (const [at, name, state] of MARCH_STORY) {
			const after = contributionOf(state);
			const key = dayOf(local(at));
			const moved = movementsBetween(states.get(name) ?? null, after).filter(m => m.productId === "all");
			if (moved.length) days.set(key, [...(days.get(key) ?? []), ...moved]);
			states.set(name, after);
		}
		return { days, states };
	}

	test("When the month's changes are counted by day, then March's movements add up from €18.33 to €64.00 and 2 to 4 subscribers", () => {
		// Act
		const { days, states } = countersOfMarch();
		const all = [...days.values()].flat();
		const total = (kind: string) => all.filter(m => m.kind === kind).reduce((sum, m) => sum + m.mrr, 0);
		const count = (kind: string) => all.filter(m => m.kind === kind).length;

		// Assert
		expect({ new: total("new"), expansion: total("expansion"), contraction: total("contraction") }).toEqual({
			new: 4400,
			expansion: 2000,
			contraction: -1000,
		});
		expect({ churned: total("churned"), reactivated: total("reactivated") }).toEqual({ churned: -3433, reactivated: 2600 });
		expect({ new: count("new"), churned: count("churned"), reactivated: count("reactivated") }).toEqual({
			new: 3,
			churned: 2,
			reactivated: 1,
		});
		expect(all.filter(m => m.kind === "churned").map(m => m.cause)).toEqual(["disputed", "paused"]);
		const closing = [...states.values()].filter(c => c.standing === "subscriber");
		expect(closing.reduce((sum, c) => sum + c.mrr, 0)).toBe(1833 + 4400 + 2000 - 1000 - 3433 + 2600);
		expect(closing.reduce((sum, c) => sum + c.mrr, 0)).toBe(6400);
		expect(closing).toHaveLength(4);
		// D's trial on 4 March moved nothing, so that day has no counter.
		expect(days.has("2026-03-04")).toBe(false);
		expect(days.get("2026-03-24")?.map(m => m.kind)).toEqual(["reactivated"]);
	});

	test("When March's days close, then the churn rate is 2 of 6 and the ARPU €16.38", () => {
		// Arrange: each day's closing MRR and subscribers, from the opening and the days' movements
		const { days } = countersOfMarch();
		let mrr = 1833;
		let subscribers = 2;
		const closing = Array.from({ length: 31 }, (_, i) => {
			const moved = days.get(`2026-03-${String(i + 1).padStart(2, "0")}`) ?? [];
			mrr += moved.reduce((sum, m) => sum + m.mrr, 0);
			subscribers += moved.reduce((sum, m) => sum + m.subscribers, 0);
			return { mrr, subscribers };
		});

		// Act
		const rate = churnRate({ subscribersAtStart: 2, new: 3, reactivated: 1, churned: 2 });
		const arpu = averageRevenuePerSubscriber(closing);

		// Assert
		expect(closing.reduce((sum, d) => sum + d.mrr, 0)).toBe(171_963);
		expect(closing.reduce((sum, d) => sum + d.subscribers, 0)).toBe(105);
		expect(rate).toBeCloseTo(1 / 3, 12);
		expect(arpu).toBe(1638);
	});

	test("When 3 of April's renewals fail and 2 come back by 10 April, then the rate is 2/3; once the third's buyer pays on 20 April, April's is 100 %", () => {
		expect(recoveryRate({ entered: 3, recoveredByRetries: 1, recoveredByCardUpdate: 1 })).toBeCloseTo(2 / 3, 12);
		expect(recoveryRate({ entered: 3, recoveredByRetries: 1, recoveredByCardUpdate: 2 })).toBe(1);
		expect(recoveryRate({ entered: 0, recoveredByRetries: 0, recoveredByCardUpdate: 0 })).toBeNull();
		expect(churnRate({ subscribersAtStart: 0, new: 0, reactivated: 0, churned: 0 })).toBeNull();
		expect(averageRevenuePerSubscriber([{ mrr: 0, subscribers: 0 }])).toBeNull();
	});
});

describe("Volume", () => {
	test("When 20 April has 3 renewals, a first charge, a renewal partly paid by credit, a refund, a decline, a hold and a chargeback, then the net volume is €32.00", () => {
		// Arrange: what the cards paid (€4.00 of the €10.00 renewal came from credit), tax included
		const approved = TransactionStatus.Approved;
		const day = [
			...[1000, 1000, 1000].map(amount => ({ type: TransactionType.Renewal, status: approved, amount })),
			{ type: TransactionType.SubscriptionStart, status: approved, amount: 10_000 },
			{ type: TransactionType.Renewal, status: approved, amount: 600 },
			{ type: TransactionType.Refunded, status: approved, amount: -400 },
			{ type: TransactionType.Renewal, status: TransactionStatus.Declined, amount: 1000 },
			{ type: TransactionType.Preauthorization, status: approved, amount: 2600 },
			{ type: TransactionType.Chargeback, status: approved, amount: -10_000 },
		];

		// Act
		const sums: Record<VolumeFigure, number> = { gross: 0, refunds: 0, chargebacks: 0 };
		for (const tx of day) {
			const counted = volumeOf(tx);
			if (counted) sums[counted.figure] += counted.amount;
		}

		// Assert
		expect(sums).toEqual({ gross: 13_600, refunds: 400, chargebacks: 10_000 });
		expect(netVolume(sums)).toBe(3200);
	});
});

describe("Day keys", () => {
	test("When something happens just after midnight in TIME_ZONE, then it is counted on the local day, not on UTC's", () => {
		// 1 April 2026 00:30 CEST is 31 March 22:30 UTC.
		const at = local("2026-04-01T00:30");
		expect(at.toISOString().slice(0, 10)).toBe("2026-03-31");
		const entry = customerEntry(42, null, contributionOf(paying(BASIC)), at);
		expect(entry?.day).toBe("2026-04-01");
		expect(monthKey(42, "EUR", entry!.day.slice(0, 7))).toBe("42:EUR:2026-04");
	});
});
