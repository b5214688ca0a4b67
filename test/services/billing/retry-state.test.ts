// What a declined renewal leads to (services/billing/renewals/retry-state.ts),
// case by case: the retry days counted from the period's first decline, a
// MID's refusal cascading without using up a retry day, and suspension.
// June dates: no daylight-saving change in TIME_ZONE, so a day is 24 hours.

import { type Declined, type RetryState, retryState } from "../../../services/billing/renewals/retry-state";
import type { MerchantAccountView } from "../../../shared/contracts/accounts";
import type { PaymentOutcome } from "../../../shared/contracts/payments";

const mid = (id: number, overrides: Partial<MerchantAccountView> = {}): MerchantAccountView => ({
	id,
	accountId: 1,
	name: `MID ${id}`,
	group: "default",
	cardTypes: ["visa"],
	active: true,
	processor: { type: "sandbox" },
	weight: 1,
	monthlyCap: null,
	...overrides,
});
const MIDS = [mid(1), mid(2), mid(3, { cardTypes: ["mastercard"] }), mid(4, { active: false }), mid(5, { weight: 0 })];

const outcome = (status: PaymentOutcome["status"], reason: string | null = null, hardDecline = false): PaymentOutcome => ({
	status,
	processorTransactionId: status === "ERROR" ? null : 7,
	processorReference: null,
	reason,
	hardDecline,
});
const SOFT = outcome("DECLINED", "insufficient_funds");
const HARD = outcome("DECLINED", "lost_card");
const REFUSED = outcome("DECLINED", "merchant_account_refused");
const AUTHENTICATION = outcome("DECLINED", "authentication_required");
const FAILED = outcome("ERROR", "processor_unavailable");

const FIRST = "2026-06-10T14:22:00.000Z";
const date = (iso: string) => new Date(iso);
const retried = (listAt: string, changes: Record<string, unknown>): RetryState => ({
	result: "declined",
	listAt: date(listAt),
	ifActive: { ...changes, nextRenewalTimestamp: date(listAt), renewalLease: null } as never,
	otherwise: { renewalLease: null },
});

interface Row {
	name: string;
	customer: Partial<Declined["customer"]>;
	outcome: PaymentOutcome;
	retryDays?: number[];
	at: string;
	expected: RetryState;
}

const rows: Row[] = [
	{
		name: "When a renewal is hard-declined, then the customer is suspended at once",
		customer: {},
		outcome: HARD,
		at: FIRST,
		expected: { result: "suspended", listAt: null, attempts: 1 },
	},
	{
		name: "When a renewal is first soft-declined, then it is retried on the first retry day, counted from that decline",
		customer: {},
		outcome: SOFT,
		at: FIRST,
		expected: retried("2026-06-11T14:22:00.000Z", { attempts: 1, firstDeclinedAt: date(FIRST) }),
	},
	{
		name: "When a retry that ran 6 hours late is declined, then the next retry is on its day counted from the first decline, not from that retry",
		customer: { attempts: 1, firstDeclinedAt: date(FIRST) },
		outcome: SOFT,
		at: "2026-06-11T20:17:00.000Z",
		expected: retried("2026-06-13T14:22:00.000Z", { attempts: 2, firstDeclinedAt: date(FIRST) }),
	},
	{
		name: "When the last retry day's try is declined, then the customer is suspended",
		customer: { attempts: 2, firstDeclinedAt: date(FIRST) },
		outcome: SOFT,
		at: "2026-06-13T14:22:00.000Z",
		expected: { result: "suspended", listAt: null, attempts: 3 },
	},
	{
		name: "When the cycles missed a retry day altogether, then that retry is tried an hour later",
		customer: { attempts: 1, firstDeclinedAt: date(FIRST) },
		outcome: SOFT,
		at: "2026-06-13T16:00:00.000Z",
		expected: retried("2026-06-13T17:00:00.000Z", { attempts: 2, firstDeclinedAt: date(FIRST) }),
	},
	{
		name: "When a MID refuses, then the renewal is tried an hour later on the next eligible MID, counted in attempts",
		customer: {},
		outcome: REFUSED,
		at: FIRST,
		expected: retried("2026-06-10T15:22:00.000Z", {
			attempts: 1,
			firstDeclinedAt: date(FIRST),
			refusedMids: [1],
			midId: 2,
			midName: "MID 2",
		}),
	},
	{
		name: "When a soft decline follows a MID's refusal, then it uses the first retry day, counted from the refusal",
		customer: { attempts: 1, refusedMids: [1], midId: 2, firstDeclinedAt: date(FIRST) },
		outcome: SOFT,
		at: "2026-06-10T15:22:00.000Z",
		expected: retried("2026-06-11T14:22:00.000Z", { attempts: 2, firstDeclinedAt: date(FIRST) }),
	},
	{
		name: "When a MID refuses and no eligible MID is left (the others refused, take another brand, are inactive or take no new sales), then the renewal is retried on the retry days",
		customer: { attempts: 1, refusedMids: [1], midId: 2, firstDeclinedAt: date(FIRST) },
		outcome: REFUSED,
		at: "2026-06-10T15:22:00.000Z",
		expected: retried("2026-06-11T14:22:00.000Z", { attempts: 2, firstDeclinedAt: date(FIRST) }),
	},
	{
		name: "When a renewal is declined for want of authentication, then it is retried like a soft decline",
		customer: {},
		outcome: AUTHENTICATION,
		at: FIRST,
		expected: retried("2026-06-11T14:22:00.000Z", { attempts: 1, firstDeclinedAt: date(FIRST) }),
	},
	{
		name: "When the processor fails, then the renewal is retried like a soft decline",
		customer: {},
		outcome: FAILED,
		at: FIRST,
		expected: retried("2026-06-11T14:22:00.000Z", { attempts: 1, firstDeclinedAt: date(FIRST) }),
	},
	{
		name: "When the account has no retry days, then the first soft decline suspends",
		customer: {},
		outcome: SOFT,
		retryDays: [],
		at: FIRST,
		expected: { result: "suspended", listAt: null, attempts: 1 },
	},
];

test.each(rows)("$name", ({ customer, outcome, retryDays, at, expected }) => {
	// Arrange
	const declined: Declined = {
		customer: { attempts: 0, refusedMids: undefined, firstDeclinedAt: null, midId: 1, cardType: "visa", ...customer },
		outcome,
		terms: { retryDays: retryDays ?? [1, 3], merchantAccounts: MIDS },
	};

	// Act
	const state = retryState(declined, date(at));

	// Assert
	expect(state).toEqual(expected);
});
