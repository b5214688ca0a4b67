// Signing in and the sessions it opens. A session is a random token in an
// HttpOnly cookie; the database keeps only its SHA-256, with the CSRF token
// the pages send back on every change. Failed sign-ins are counted per email
// (known or not, so a lockout tells nothing about which emails exist): after
// `lockoutFailures` in a row the email is locked for `lockoutMs`.
import { randomBytes } from "node:crypto";
import type { SessionUser } from "../../shared/contracts/dashboard";
import { sha256Hex } from "../../shared/crypto";
import type { DashboardDeps } from "./deps";
import { DashboardError } from "./errors";
import { DECOY_HASH, verifyPassword } from "./passwords";
import { toUserView, type UserView } from "./users";

export interface SignedIn {
	/** The cookie's value; only its hash is stored. */
	token: string;
	csrfToken: string;
	user: UserView;
}

export async function signIn(deps: DashboardDeps, input: { email: string; password: string }): Promise<SignedIn | DashboardError> {
	const email = input.email.trim().toLowerCase();
	const now = deps.now();
	const failures = await deps.db.signInFailures.findById(email).lean();
	if (failures?.lockedUntil && failures.lockedUntil > now) return DashboardError.LockedOut;
	const user = await deps.db.users.findOne({ email }).lean();
	// The same work whether or not the email is known.
	const matches = await verifyPassword(input.password, user?.passwordHash ?? (await DECOY_HASH));
	if (!user || !matches || user.disabled) {
		await countFailure(deps, email, now);
		return DashboardError.SignInRefused;
	}
	if (failures) await deps.db.signInFailures.deleteOne({ _id: email });
	const token = randomBytes(32).toString("base64url");
	const csrfToken = randomBytes(32).toString("base64url");
	await deps.db.sessions.create({
		_id: sha256Hex(token),
		userId: user._id,
		accountId: user.accountId,
		csrfToken,
		createdAt: now,
		lastSeenAt: now,
		ended: false,
	});
	return { token, csrfToken, user: toUserView(user) };
}

async function countFailure(deps: DashboardDeps, email: string, now: Date): Promise<void> {
	const after = await deps.db.signInFailures
		.findOneAndUpdate({ _id: email }, { $inc: { count: 1 } }, { upsert: true, returnDocument: "after" })
		.lean();
	if ((after?.count ?? 0) >= deps.settings.lockoutFailures) {
		// Locked from now; the count starts again when the lock ends.
		await deps.db.signInFailures.updateOne(
			{ _id: email },
			{ $set: { lockedUntil: new Date(now.getTime() + deps.settings.lockoutMs), count: 0 } },
		);
	}
}

/** The session's user, if the session is open, used within the idle limit and its user still enabled; this request counts as its use. */
export async function sessionUser(deps: DashboardDeps, input: { token: string }): Promise<SessionUser | DashboardError> {
	const now = deps.now();
	const session = await deps.db.sessions.findById(sha256Hex(input.token)).lean();
	if (!session || session.ended || session.lastSeenAt.getTime() + deps.settings.idleMs <= now.getTime()) return DashboardError.NoSession;
	const user = await deps.db.users.findById(session.userId).lean();
	if (!user || user.disabled || user.accountId !== session.accountId) return DashboardError.NoSession;
	// Every request, so that the session ends `idleMs` after the last one, however short the limit.
	await deps.db.sessions.updateOne({ _id: session._id }, { $max: { lastSeenAt: now } });
	return { userId: user._id, accountId: user.accountId, email: user.email, role: user.role, csrfToken: session.csrfToken };
}

export async function signOut(deps: DashboardDeps, input: { token: string }): Promise<{ signedOut: true }> {
	await deps.db.sessions.updateOne({ _id: sha256Hex(input.token) }, { $set: { ended: true } });
	return { signedOut: true };
}
