// What billing's domain functions are given (deps.ts):
// its database and schedules, and the other services as plain functions.

import { LRUCache } from "lru-cache";
import type { ServiceBroker } from "moleculer";
import { call, callsThrough } from "../../../shared/call";
import { config } from "../../../shared/config";
import { createAccountClocks } from "../account-time";
import type { BillingDeps } from "../deps";
import { createCardExpirySchedule } from "../expiry-warnings";
import { midCounters } from "../mid-stats/mid-stats";
import type { BillingDb } from "../models";
import { createOutboxSchedule } from "../outbox/outbox";
import type { RelayTargets } from "../outbox/outbox-relay";
import { paymentsThrough } from "../payments";
import { recoveryCounters } from "../renewals/recovery-counters";
import { createRenewalSchedule } from "../renewals/renewal-schedule";
import { createCheckoutSchedule } from "../subscriptions/checkout-recovery";
import { createResumeSchedule } from "../subscriptions/pause";

/** `relay` hands targets to the outbox relay, which starts after the deps are made (it needs them). */
export function createBillingDeps(broker: ServiceBroker, db: BillingDb, relay: (targets: RelayTargets) => void): BillingDeps {
	return {
		db,
		renewals: createRenewalSchedule(db),
		outbox: createOutboxSchedule(db),
		checkouts: createCheckoutSchedule(db),
		cardExpiry: createCardExpirySchedule(db),
		resumes: createResumeSchedule(db),
		recoveryCounters: recoveryCounters(broker),
		midCounters: midCounters(broker),
		payments: paymentsThrough(callsThrough(broker)),
		relay,
		justOpened: new LRUCache({ max: 10_000, ttl: config().requestTimeoutMs }),
		now: () => new Date(),
		clocks: createAccountClocks(db, () => new Date(), config().renewalLeaseMs),
		productOf: (accountId, productId) => call(broker, "accounts.getProduct", { accountId, productId }),
		usage: {
			close: input => call(broker, "usage.closePeriod", input),
			current: input => call(broker, "usage.currentUsage", input),
		},
		releaseSession: async input => {
			await call(broker, "sessions.release", input);
		},
		merchantAccountsOf: accountId => call(broker, "accounts.listMerchantAccounts", { accountId }),
		refundGraceMs: config().refundRecoveryGraceMs,
		protectionOf: async accountId => (await call(broker, "accounts.get", { accountId })).disputeProtection,
		blockBuyer: async input => {
			await call(broker, "accounts.blockBuyer", input);
		},
		coupons: {
			find: input => call(broker, "accounts.couponFor", input),
			redeem: input => call(broker, "accounts.redeemCoupon", input),
			confirm: input => call(broker, "accounts.confirmCoupon", input),
			release: input => call(broker, "accounts.releaseCoupon", input),
		},
	};
}
