// What billing's domain functions get: the database, the schedules, the clocks, typed calls to the other services,
// the relay's kick and the node's counters. wiring/deps.ts builds it once per node.
import type {
	AccountsActions,
	BlockBuyerInput,
	DisputeProtection,
	MerchantAccountView,
	ProductRecord,
} from "../../shared/contracts/accounts";
import type { UsageActions } from "../../shared/contracts/usage";
import type { Schedule } from "../../shared/schedule";
import type { AccountClocks } from "./account-time";
import type { MidCounters } from "./mid-stats/mid-stats";
import type { BillingDb } from "./models";
import type { RelayTargets } from "./outbox/outbox-relay";
import type { Payments } from "./payments";
import type { CustomerDoc } from "./records/customer";

export interface BillingDeps {
	db: BillingDb;
	/** Customers by the time their next charge is due (renewals/renewal-schedule.ts). */
	renewals: Schedule<number>;
	/** Outbox events by the time they were written (outbox/outbox.ts): the relay's sweep finds them by key. */
	outbox: Schedule<string>;
	/** The node's recovery counters on /metrics (renewals/recovery-counters.ts); absent when the broker's metrics are off. */
	recoveryCounters?: { entered(): void; recovered(currency: string, amountMinor: number): void };
	/** The node's per-MID counters on /metrics (mid-stats.ts); absent when the broker's metrics are off. */
	midCounters?: MidCounters;
	/** Checkouts by the time they opened (checkout-recovery.ts): one left PENDING is found by key. */
	checkouts: Schedule<number>;
	/** When to send CARD_EXPIRING warnings (expiry-warnings.ts). */
	cardExpiry: Schedule<number>;
	/** Paused customers by their resumeAt (subscriptions/pause.ts): the renewal cycle resumes them. */
	resumes: Schedule<number>;
	/**
	 * Customers this node opened for a checkout, as inserted, kept for less than a request's time (REQUEST_TIMEOUT_MS):
	 * the checkout's first payment follows within its request, usually on this node, and need not read its customer.
	 */
	justOpened?: {
		get(customerId: number): CustomerDoc | undefined;
		set(customerId: number, doc: CustomerDoc): void;
		delete(customerId: number): void;
	};
	/** Hands the records an action or a sweep wrote events on to the outbox relay, so their webhooks go out at once. */
	relay(targets: RelayTargets): void;
	/** The payments service: charges, holds and refunds by card token, each on its MID's processor. */
	payments: Payments;
	/** The real time: what a person or a network waits on (leases, sessions, a quote's validity, the outbox's times). */
	now: () => Date;
	/** Each account's now, which it bills and dates at: the real time, or a sandbox's test clock (account-time.ts). */
	clocks: AccountClocks;
	/** The account's MIDs (accounts.listMerchantAccounts); an unknown account is thrown as its 404. */
	merchantAccountsOf(accountId: number): Promise<MerchantAccountView[]>;
	/** Frees a session whose payment ended unpaid with no checkout to do it (sessions.release): past its end it reads EXPIRED. */
	releaseSession(input: { sessionId: string; attemptId: string }): Promise<void>;
	/** The account's product (accounts.getProduct), or null when it is gone. */
	productOf(accountId: number, productId: number): Promise<ProductRecord | null>;
	/** How long a refund's request may take before the recovery may settle it instead (REFUND_RECOVERY_GRACE_MS). */
	refundGraceMs: number;
	/** The account's dispute protection (accounts.get). */
	protectionOf(accountId: number): Promise<DisputeProtection>;
	/** Refuses the buyer's card and email at the account's new checkouts (accounts.blockBuyer). */
	blockBuyer(input: BlockBuyerInput): Promise<void>;
	/** The usage service (docs/usage.md#billing): a period's usage closed by its charge, and the current period's for a preview. */
	usage: {
		close(input: UsageActions["usage.closePeriod"]["params"]): Promise<UsageActions["usage.closePeriod"]["result"]>;
		current(input: UsageActions["usage.currentUsage"]["params"]): Promise<UsageActions["usage.currentUsage"]["result"]>;
	};
	/** The accounts service's coupons (accounts.couponFor, redeemCoupon, confirmCoupon, releaseCoupon): coupons/redemption.ts. */
	coupons: {
		find(input: AccountsActions["accounts.couponFor"]["params"]): Promise<AccountsActions["accounts.couponFor"]["result"]>;
		redeem(input: AccountsActions["accounts.redeemCoupon"]["params"]): Promise<AccountsActions["accounts.redeemCoupon"]["result"]>;
		confirm(input: { couponId: number; customerId: number }): Promise<unknown>;
		release(input: { couponId: number; customerId: number }): Promise<unknown>;
	};
}
