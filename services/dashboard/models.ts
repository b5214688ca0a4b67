// The dashboard's collections: its users (each belongs to one account), their
// server-side sessions, and the audit log of what they did.
import { type Connection, type Model, Schema } from "mongoose";
import type { AuditInput } from "../../shared/contracts/dashboard";
import { createIdAllocator, type IdAllocator } from "../../shared/id-allocator";
import { createTimelines, type Timelines } from "../../shared/timeline";
import type { Role } from "./roles";

export interface UserDoc {
	_id: number;
	accountId: number;
	/** Lower case; unique over all accounts (a person signs in with it alone). */
	email: string;
	role: Role;
	/** scrypt (passwords.ts); never the password. */
	passwordHash: string;
	disabled: boolean;
	createdAt: Date;
}

export interface SessionDoc {
	/** SHA-256 of the cookie's token: the token itself is only in the browser. */
	_id: string;
	userId: number;
	accountId: number;
	/** Sent with every state-changing request (X-CSRF-Token) and compared here. */
	csrfToken: string;
	createdAt: Date;
	lastSeenAt: Date;
	/** Signed out: the session is over whatever its time. */
	ended: boolean;
}

/** Failed sign-ins in a row for an email, known or not, and the lock they led to. */
export interface SignInFailuresDoc {
	/** The email, lower case. */
	_id: string;
	count: number;
	lockedUntil: Date | null;
}

/** One entry of the audit log (shared/contracts/dashboard.ts AuditInput), keyed by a UUID. */
export interface AuditDoc extends AuditInput {
	_id: string;
	at: Date;
}

const options = { versionKey: false } as const;

const userSchema = new Schema<UserDoc>(
	{
		_id: Number,
		accountId: { type: Number, required: true },
		email: { type: String, required: true },
		role: { type: String, enum: ["viewer", "operator"], required: true },
		passwordHash: { type: String, required: true },
		disabled: { type: Boolean, default: false },
		createdAt: { type: Date, required: true },
	},
	options,
);
userSchema.index({ email: 1 }, { unique: true });

const sessionSchema = new Schema<SessionDoc>(
	{
		_id: String,
		userId: { type: Number, required: true },
		accountId: { type: Number, required: true },
		csrfToken: { type: String, required: true },
		createdAt: { type: Date, required: true },
		lastSeenAt: { type: Date, required: true },
		ended: { type: Boolean, default: false },
	},
	options,
);

const auditSchema = new Schema<AuditDoc>(
	{
		_id: String,
		accountId: { type: Number, required: true },
		userId: { type: Number, required: true },
		email: { type: String, required: true },
		action: { type: String, required: true },
		target: { type: String, default: null },
		outcome: { type: String, required: true },
		from: { type: String, required: true },
		at: { type: Date, required: true },
	},
	options,
);

const signInFailuresSchema = new Schema<SignInFailuresDoc>(
	{ _id: String, count: { type: Number, default: 0 }, lockedUntil: { type: Date, default: null } },
	options,
);

export interface DashboardDb {
	users: Model<UserDoc>;
	sessions: Model<SessionDoc>;
	signInFailures: Model<SignInFailuresDoc>;
	audit: Model<AuditDoc>;
	/** An account's users (bag `u:<account>`) and audit log (`a:<account>`), read by key. */
	timelines: Timelines;
	ids: { users: IdAllocator };
}

export function createDashboardDb(connection: Connection): DashboardDb {
	return {
		users: connection.model("DashboardUser", userSchema, "dashboard_users"),
		sessions: connection.model("DashboardSession", sessionSchema, "dashboard_sessions"),
		signInFailures: connection.model("SignInFailures", signInFailuresSchema, "dashboard_sign_in_failures"),
		audit: connection.model("AuditEntry", auditSchema, "audit_log"),
		timelines: createTimelines(connection),
		ids: { users: createIdAllocator(connection, "dashboard_users", 10) },
	};
}
