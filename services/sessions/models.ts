// The sessions service's collections: checkout and card update sessions (by a random UUID), and the links a card
// update starts from.
import { type Connection, type Model, Schema } from "mongoose";
import type { SessionCoupon } from "../../shared/contracts/sessions";
import { SessionStatus, type StoredSessionStatus } from "./states";

export interface SessionDoc {
	/** A random UUID: the session id the merchant hands to the SDK. */
	_id: string;
	accountId: number;
	/** Lower-case host name the checkout must be shown on. */
	domain: string;
	/** A card update session's customer; null for a checkout session. */
	customerId: number | null;
	status: StoredSessionStatus;
	createdAt: Date;
	expiresAt: Date;
	usedAt: Date | null;
	/** The checkout attempt that last consumed the session: only it may release it again, and a continue reads its payment (kept after a release). */
	usedBy: string | null;
	/** The customer that attempt opened: its payment continues after a challenge. */
	usedFor?: number | null;
	/** The coupon the merchant attached to the checkout, by id or by promotion code; absent: none. */
	coupon?: SessionCoupon | null;
}

const sessionSchema = new Schema<SessionDoc>(
	{
		_id: String,
		accountId: { type: Number, required: true },
		domain: { type: String, required: true },
		customerId: { type: Number, default: null },
		status: { type: String, enum: [SessionStatus.Valid, SessionStatus.Used], required: true },
		createdAt: { type: Date, required: true },
		expiresAt: { type: Date, required: true },
		usedAt: { type: Date, default: null },
		usedBy: { type: String, default: null },
		usedFor: { type: Number, default: null },
		coupon: { type: Schema.Types.Mixed, default: undefined },
	},
	{ versionKey: false },
);

/** A card update link (card-update-links.ts): a token a customer opens to give a new card, for days. */
export interface CardUpdateLinkDoc {
	/** SHA-256 of the link's token: the token itself is only in the link. */
	_id: string;
	accountId: number;
	customerId: number;
	createdAt: Date;
	expiresAt: Date;
}

const cardUpdateLinkSchema = new Schema<CardUpdateLinkDoc>(
	{
		_id: String,
		accountId: { type: Number, required: true },
		customerId: { type: Number, required: true },
		createdAt: { type: Date, required: true },
		expiresAt: { type: Date, required: true },
	},
	{ versionKey: false },
);

export interface SessionsDb {
	sessions: Model<SessionDoc>;
	cardUpdateLinks: Model<CardUpdateLinkDoc>;
}

export function createSessionsDb(connection: Connection): SessionsDb {
	return {
		sessions: connection.model("Session", sessionSchema, "sessions"),
		cardUpdateLinks: connection.model("CardUpdateLink", cardUpdateLinkSchema, "card_update_links"),
	};
}
