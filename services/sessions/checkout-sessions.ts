// Creating and reading checkout sessions.

import { randomUUID } from "node:crypto";
import { isFailure } from "../../shared/call";
import { CardUpdateError } from "../../shared/contracts/billing";
import { insertDoc, ownedBy } from "../../shared/persistence";
import { formatDateTime } from "../../shared/time";
import type { SessionsDeps } from "./deps";
import { SessionsError } from "./errors";
import { normalizeHostName } from "./host-name";
import type { SessionDoc } from "./models";
import { SESSION_LIFETIME_MS, SessionStatus, statusAt } from "./states";

export interface SessionView {
	sessionId: string;
	domain: string;
	createdAt: string;
	expiresAt: string;
	status: SessionStatus;
}

function toSessionView(doc: SessionDoc, now: Date): SessionView {
	return {
		sessionId: doc._id,
		domain: doc.domain,
		createdAt: formatDateTime(doc.createdAt),
		expiresAt: formatDateTime(doc.expiresAt),
		status: statusAt(doc.status, doc.expiresAt, now),
	};
}

export async function createSession(
	deps: SessionsDeps,
	input: { accountId: number; domain?: unknown; customerId?: number; couponId?: number; promotionCode?: string },
): Promise<{ sessionId: string } | Exclude<SessionsError, SessionsError.UnknownLink>> {
	const domain = normalizeHostName(input.domain);
	if (!domain) return SessionsError.InvalidDomain;
	if (input.customerId !== undefined) {
		const refused = await cardUpdateRefusal(deps, input.accountId, input.customerId);
		if (refused) return refused;
	}
	// A coupon is the checkout's: checked when the checkout applies it, with its own codes (docs/coupons.md).
	if (input.couponId !== undefined && input.promotionCode !== undefined) return SessionsError.CouponAndCode;
	if (input.customerId !== undefined && (input.couponId ?? input.promotionCode) !== undefined) return SessionsError.CouponAndCode;
	const coupon = input.couponId !== undefined ? { couponId: input.couponId } : input.promotionCode ? { code: input.promotionCode } : null;
	const createdAt = deps.now();
	const doc = await insertDoc(deps.db.sessions, {
		_id: randomUUID(),
		accountId: input.accountId,
		domain,
		customerId: input.customerId ?? null,
		status: SessionStatus.Valid,
		createdAt,
		expiresAt: new Date(createdAt.getTime() + SESSION_LIFETIME_MS),
		...(coupon ? { coupon } : {}),
	});
	return { sessionId: doc._id };
}

/** Why the account's customer may not get a card update (unknown, another account's, or its card cannot change), or null when it may. */
export async function cardUpdateRefusal(
	deps: SessionsDeps,
	accountId: number,
	customerId: number,
): Promise<SessionsError.UnknownCustomer | SessionsError.NotUpdatable | null> {
	const target = await deps.cardUpdateTarget(accountId, customerId);
	if (!isFailure(target)) return null;
	return target.error === CardUpdateError.UnknownCustomer ? SessionsError.UnknownCustomer : SessionsError.NotUpdatable;
}

/** The account's session, or null when it is unknown or another account's. */
export async function getSession(deps: SessionsDeps, input: { accountId: number; sessionId: string }): Promise<SessionView | null> {
	const doc = ownedBy(await deps.db.sessions.findById(input.sessionId.toLowerCase()).lean(), input.accountId);
	return doc ? toSessionView(doc, deps.now()) : null;
}

/**
 * The host name a session is bound to, whichever account's it is: the gateway
 * lets only that site embed the session's checkout frame (CSP frame-ancestors).
 * The session id is all the frame has, and it tells nothing else.
 */
export async function sessionDomain(deps: SessionsDeps, input: { sessionId: string }): Promise<{ domain: string } | null> {
	const doc = await deps.db.sessions.findById(input.sessionId.toLowerCase(), { domain: 1 }).lean();
	return doc ? { domain: doc.domain } : null;
}
