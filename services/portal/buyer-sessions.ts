// A buyer's portal session (docs/portal.md#security): opened once from a link,
// kept in an HttpOnly cookie the gateway sets, for PORTAL_SESSION_MINUTES.
// Every change must also carry the session's CSRF token, which only the
// portal's own page can read (GET /portal/api/me).
import { randomBytes } from "node:crypto";
import { secretsEqual, sha256Hex } from "../../shared/crypto";
import type { PortalDeps } from "./deps";
import { PortalError } from "./errors";
import type { PortalSessionDoc } from "./models";

/** A session lasts this long from the link's opening, whatever the buyer does. */
export const PORTAL_SESSION_MINUTES = 60;

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export interface OpenedSession {
	/** For the gateway's cookie only: never in an answer's body. */
	sessionToken: string;
	maxAgeSeconds: number;
}

/** Trades a link's token for a session; the link is used up by the first to open it. */
export async function openPortalLink(deps: PortalDeps, input: { token: string }): Promise<OpenedSession | PortalError> {
	if (!TOKEN.test(input.token)) return PortalError.LinkInvalid;
	const now = deps.now();
	const link = await deps.db.links
		.findOneAndUpdate({ _id: sha256Hex(input.token), usedAt: null }, { $set: { usedAt: now } }, { returnDocument: "before" })
		.lean();
	if (!link || link.expiresAt.getTime() <= now.getTime()) return PortalError.LinkInvalid;
	const sessionToken = randomBytes(32).toString("base64url");
	await deps.db.sessions.create({
		_id: sha256Hex(sessionToken),
		accountId: link.accountId,
		customerId: link.customerId,
		csrfToken: randomBytes(32).toString("base64url"),
		returnUrl: link.returnUrl,
		locale: link.locale,
		createdAt: now,
		expiresAt: new Date(now.getTime() + PORTAL_SESSION_MINUTES * 60_000),
		endedAt: null,
	});
	return { sessionToken, maxAgeSeconds: PORTAL_SESSION_MINUTES * 60 };
}

export interface SessionInput {
	/** The cookie's value, set by the gateway. */
	sessionToken?: string;
	/** X-CSRF-Token, set by the gateway on a change. */
	csrfToken?: string;
}

/** The live session of a request; a change must carry its CSRF token. */
export async function sessionOf(deps: PortalDeps, input: SessionInput, change: boolean): Promise<PortalSessionDoc | PortalError> {
	if (!input.sessionToken || !TOKEN.test(input.sessionToken)) return PortalError.SessionEnded;
	const session = await deps.db.sessions.findById(sha256Hex(input.sessionToken)).lean();
	if (!session || session.endedAt || session.expiresAt.getTime() <= deps.now().getTime()) return PortalError.SessionEnded;
	if (change && !(input.csrfToken && secretsEqual(input.csrfToken, session.csrfToken))) return PortalError.CsrfMismatch;
	return session;
}

export async function signOut(deps: PortalDeps, input: SessionInput): Promise<{ signedOut: true } | PortalError> {
	const session = await sessionOf(deps, input, true);
	if (typeof session === "string") return session;
	await deps.db.sessions.updateOne({ _id: session._id, endedAt: null }, { $set: { endedAt: deps.now() } });
	return { signedOut: true };
}
