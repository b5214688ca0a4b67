// The customer portal (docs/portal.md): single-use links the merchant's server
// makes, the buyer's session they open, and what the buyer may do there, as
// the account's portal settings allow. Owns its links, sessions and the
// retention offers taken; everything else it asks billing, accounts,
// invoicing and sessions for, as the merchant's API does.
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { domainErrors, idempotent } from "../../shared/action";
import { callsThrough } from "../../shared/call";
import { dbMixin } from "../../shared/db.mixin";
import { acceptOffer, cancel, cardSession, change, documents, me, pause, quote, resume, undoCancel } from "./buyer-actions";
import { openPortalLink, signOut } from "./buyer-sessions";
import type { PortalDeps } from "./deps";
import { PORTAL_ERRORS } from "./errors";
import { createPortalDb, type PortalDb } from "./models";
import { createPortalLink, requestSignIn, signInLink } from "./portal-links";
import { schemas } from "./schemas";

const { action } = domainErrors(PORTAL_ERRORS);

interface Locals {
	db: PortalDb;
	deps: PortalDeps;
}

const PortalService: ServiceSchema<ServiceSettingSchema, Record<string, never>, Locals> = {
	name: "portal",
	mixins: [dbMixin("portal", createPortalDb)],

	actions: {
		// POST /api/customer/{id}/portal-session: the merchant's server.
		createLink: action(schemas.createLink, createPortalLink),
		// /portal/api: the buyer's page.
		open: action(schemas.open, openPortalLink),
		// Email sign-in (portal-links.ts): the page asks, notifications makes the link as it sends the email.
		requestSignIn: action(schemas.signIn, requestSignIn),
		signInLink: action(schemas.signInLink, signInLink),
		me: idempotent(action(schemas.session, me)),
		documents: idempotent(action(schemas.subscription, documents)),
		quote: action(schemas.quote, quote),
		change: action(schemas.change, change),
		pause: action(schemas.subscription, pause),
		resume: action(schemas.subscription, resume),
		cancel: action(schemas.cancel, cancel),
		undoCancel: action(schemas.subscription, undoCancel),
		acceptOffer: action(schemas.subscription, acceptOffer),
		cardSession: action(schemas.cardSession, cardSession),
		signOut: action(schemas.session, signOut),
	},

	async started() {
		this.deps = { db: this.db, call: callsThrough(this.broker), now: () => new Date() };
	},
};

export default PortalService;
