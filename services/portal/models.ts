// The portal service's collections: the single-use links a merchant's server makes, the buyers' sessions they open,
// and the retention offers taken (once per subscription). Every read is by key.
import { type Connection, type Model, Schema } from "mongoose";
import type { PortalLanguage } from "../../shared/contracts/accounts";

/** A portal link (portal-links.ts): opened once, within PORTAL_LINK_MINUTES. */
export interface PortalLinkDoc {
	/** SHA-256 of the link's token: the token itself is only in the link. */
	_id: string;
	accountId: number;
	/** The customer the merchant named: the session shows its email's subscriptions on the account. */
	customerId: number;
	returnUrl: string | null;
	locale: PortalLanguage | null;
	createdAt: Date;
	expiresAt: Date;
	/** When it was opened; a link is opened once. */
	usedAt: Date | null;
}

/** A buyer's session (buyer-sessions.ts): its cookie's token, hashed, for PORTAL_SESSION_MINUTES after the link opened. */
export interface PortalSessionDoc {
	_id: string;
	accountId: number;
	customerId: number;
	/** Sent back by the page in X-CSRF-Token on every change. */
	csrfToken: string;
	returnUrl: string | null;
	locale: PortalLanguage | null;
	createdAt: Date;
	expiresAt: Date;
	/** Signed out. */
	endedAt: Date | null;
}

/** A retention offer taken: `<accountId>:<customerId>`, a unique key, so each subscription takes it once. */
export interface RetentionOfferDoc {
	_id: string;
	accountId: number;
	customerId: number;
	couponId: number;
	takenAt: Date;
}

const options = { versionKey: false } as const;

const linkSchema = new Schema<PortalLinkDoc>(
	{
		_id: String,
		accountId: { type: Number, required: true },
		customerId: { type: Number, required: true },
		returnUrl: { type: String, default: null },
		locale: { type: String, default: null },
		createdAt: { type: Date, required: true },
		expiresAt: { type: Date, required: true },
		usedAt: { type: Date, default: null },
	},
	options,
);

const sessionSchema = new Schema<PortalSessionDoc>(
	{
		_id: String,
		accountId: { type: Number, required: true },
		customerId: { type: Number, required: true },
		csrfToken: { type: String, required: true },
		returnUrl: { type: String, default: null },
		locale: { type: String, default: null },
		createdAt: { type: Date, required: true },
		expiresAt: { type: Date, required: true },
		endedAt: { type: Date, default: null },
	},
	options,
);

const offerSchema = new Schema<RetentionOfferDoc>(
	{
		_id: String,
		accountId: { type: Number, required: true },
		customerId: { type: Number, required: true },
		couponId: { type: Number, required: true },
		takenAt: { type: Date, required: true },
	},
	options,
);
// Production (MongoDB) removes links and sessions a day after they end; mongo-java-server ignores it (they stay, inert).
linkSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 86_400 });
sessionSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 86_400 });

export interface PortalDb {
	links: Model<PortalLinkDoc>;
	sessions: Model<PortalSessionDoc>;
	offers: Model<RetentionOfferDoc>;
}

export function createPortalDb(connection: Connection): PortalDb {
	return {
		links: connection.model("PortalLink", linkSchema, "portal_links"),
		sessions: connection.model("PortalSession", sessionSchema, "portal_sessions"),
		offers: connection.model("RetentionOffer", offerSchema, "retention_offers"),
	};
}
