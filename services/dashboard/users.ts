// Dashboard users, managed through the admin API and the REPL: each belongs
// to one account, signs in with its email, and has a role.
import { randomBytes } from "node:crypto";
import { isDuplicateKey, ownedBy } from "../../shared/persistence";
import { addToBags, bag } from "../../shared/timeline";
import type { DashboardDeps } from "./deps";
import { DashboardError } from "./errors";
import type { UserDoc } from "./models";
import { hashPassword } from "./passwords";
import type { Role } from "./roles";

export interface UserView {
	id: number;
	accountId: number;
	email: string;
	role: Role;
	disabled: boolean;
	createdAt: string;
}

export function toUserView(doc: UserDoc): UserView {
	return {
		id: doc._id,
		accountId: doc.accountId,
		email: doc.email,
		role: doc.role,
		disabled: doc.disabled,
		createdAt: doc.createdAt.toISOString(),
	};
}

const usersOf = (accountId: number) => `u:${accountId}`;

/** A new user; without a password one is made and answered once (it is stored only hashed). */
export async function createUser(
	deps: DashboardDeps,
	input: { accountId: number; email: string; role: Role; password?: string },
): Promise<(UserView & { password?: string }) | DashboardError> {
	const email = input.email.trim().toLowerCase();
	// Refused before anything is written or hashed; the unique index still decides a race.
	if (await deps.db.users.exists({ email })) return DashboardError.EmailTaken;
	const password = input.password ?? randomBytes(12).toString("base64url");
	const doc: UserDoc = {
		_id: await deps.db.ids.users.next(),
		accountId: input.accountId,
		email,
		role: input.role,
		passwordHash: await hashPassword(password),
		disabled: false,
		createdAt: deps.now(),
	};
	await addToBags(deps.db.timelines, [{ key: usersOf(input.accountId), ref: [doc._id, doc.createdAt.getTime()] }]);
	try {
		await deps.db.users.create(doc);
	} catch (err) {
		if (isDuplicateKey(err)) return DashboardError.EmailTaken;
		throw err;
	}
	return { ...toUserView(doc), ...(input.password === undefined ? { password } : {}) };
}

export async function listUsers(deps: DashboardDeps, input: { accountId: number }): Promise<UserView[]> {
	const ids = (await bag(deps.db.timelines, usersOf(input.accountId))).map(([id]) => id as number);
	const docs = await deps.db.users.find({ _id: { $in: ids } }).lean();
	return docs
		.filter(d => d.accountId === input.accountId)
		.map(toUserView)
		.sort((a, b) => a.id - b.id);
}

/**
 * Disables or enables a user, changes its role or its password; disabling ends
 * its sessions at their next request, and a new password ends its email's lockout.
 */
export async function updateUser(
	deps: DashboardDeps,
	input: { accountId: number; userId: number; disabled?: boolean; role?: Role; password?: string },
): Promise<UserView | DashboardError> {
	const current = ownedBy(await deps.db.users.findById(input.userId).lean(), input.accountId);
	if (!current) return DashboardError.UnknownUser;
	const changes: Partial<UserDoc> = {};
	if (input.disabled !== undefined) changes.disabled = input.disabled;
	if (input.role !== undefined) changes.role = input.role;
	if (input.password !== undefined) changes.passwordHash = await hashPassword(input.password);
	const doc = await deps.db.users.findOneAndUpdate({ _id: input.userId }, { $set: changes }, { returnDocument: "after" }).lean();
	if (!doc) return DashboardError.UnknownUser;
	// Failures are counted per email (sign-in.ts): the operator who sets the password vouches for the person.
	if (input.password !== undefined) await deps.db.signInFailures.deleteOne({ _id: doc.email });
	return toUserView(doc);
}
