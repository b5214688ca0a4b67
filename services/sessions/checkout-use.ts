// How a checkout uses its session: check it (step 1), consume it just before
// money moves, and release it again if the payment fails so the buyer can
// retry with another card. Consuming is one compare-and-set, so two checkouts
// racing on one session cannot both pay.

import { SessionCheckoutError, type SessionCoupon, type SessionPurpose } from "../../shared/contracts/sessions";
import { raw } from "../../shared/persistence";
import type { SessionsDeps } from "./deps";
import { normalizeHostName } from "./host-name";
import { CONSUME, RELEASE, SessionStatus, statusAt } from "./states";

/** A session created for a customer is a card update's. */
const purposeOf = (doc: { customerId?: number | null }): SessionPurpose => (doc.customerId != null ? "cardUpdate" : "checkout");

export async function checkForCheckout(
	deps: SessionsDeps,
	input: { sessionId: string; landingDomain: string; purpose?: SessionPurpose },
): Promise<{ accountId: number; domain: string; customerId: number | null; coupon: SessionCoupon | null } | SessionCheckoutError> {
	const doc = await raw(deps.db.sessions).findOne({ _id: input.sessionId.toLowerCase() });
	// A session of the other kind is no session for this use.
	if (!doc || purposeOf(doc) !== (input.purpose ?? "checkout")) return SessionCheckoutError.NotFound;
	const status = statusAt(doc.status, doc.expiresAt, deps.now());
	if (status === SessionStatus.Used) return SessionCheckoutError.Used;
	if (status === SessionStatus.Expired) return SessionCheckoutError.Expired;
	if (normalizeHostName(input.landingDomain) !== doc.domain) return SessionCheckoutError.DomainMismatch;
	return { accountId: doc.accountId, domain: doc.domain, customerId: doc.customerId ?? null, coupon: doc.coupon ?? null };
}

/** VALID -> USED, only while the session has not expired. */
export async function consumeSession(
	deps: SessionsDeps,
	input: { sessionId: string; attemptId: string; customerId?: number },
): Promise<{ sessionId: string; expiresAt: string } | SessionCheckoutError> {
	const now = deps.now();
	const sessionId = input.sessionId.toLowerCase();
	const doc = await raw(deps.db.sessions).findOneAndUpdate(
		{ _id: sessionId, ...CONSUME.filter, expiresAt: { $gt: now } },
		{ $set: { ...CONSUME.set, usedAt: now, usedBy: input.attemptId, usedFor: input.customerId ?? null } },
		{ returnDocument: "after" },
	);
	if (doc) return { sessionId, expiresAt: doc.expiresAt.toISOString() };
	const current = await deps.db.sessions.findById(sessionId).lean();
	if (!current) return SessionCheckoutError.NotFound;
	return current.status === SessionStatus.Used ? SessionCheckoutError.Used : SessionCheckoutError.Expired;
}

/**
 * The checkout (or card update) of the session's last payment, for its continuation after a challenge: on the
 * session's own site only. Released or expired too: a repeated continue answers what the payment came to.
 */
export async function paymentInProgress(
	deps: SessionsDeps,
	input: { sessionId: string; landingDomain: string; purpose?: SessionPurpose },
): Promise<{ accountId: number; attemptId: string; customerId: number } | SessionCheckoutError> {
	const doc = await deps.db.sessions.findById(input.sessionId.toLowerCase()).lean();
	if (!doc || purposeOf(doc) !== (input.purpose ?? "checkout")) return SessionCheckoutError.NotFound;
	if (normalizeHostName(input.landingDomain) !== doc.domain) return SessionCheckoutError.DomainMismatch;
	if (!doc.usedBy || doc.usedFor == null)
		return statusAt(doc.status, doc.expiresAt, deps.now()) === SessionStatus.Expired
			? SessionCheckoutError.Expired
			: SessionCheckoutError.NotFound;
	return { accountId: doc.accountId, attemptId: doc.usedBy, customerId: doc.usedFor };
}

/** USED -> VALID, by the attempt that consumed it, after its payment ended unpaid; `usedBy` stays for a repeated continue. */
export async function releaseSession(deps: SessionsDeps, input: { sessionId: string; attemptId: string }): Promise<{ released: boolean }> {
	const result = await deps.db.sessions.updateOne(
		{ _id: input.sessionId.toLowerCase(), ...RELEASE.filter, usedBy: input.attemptId },
		{ $set: { ...RELEASE.set, usedAt: null } },
	);
	return { released: result.modifiedCount === 1 };
}
