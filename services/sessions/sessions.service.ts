// Checkout sessions: created by the merchant's server for one domain, valid
// for 5 minutes, consumed by the first successful checkout.
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { domainAction, domainErrors, errorAsValue, idempotent } from "../../shared/action";
import { call } from "../../shared/call";
import { dbMixin } from "../../shared/db.mixin";
import { createCardUpdateLink, openCardUpdateLink } from "./card-update-links";
import { createSession, getSession, sessionDomain } from "./checkout-sessions";
import { checkForCheckout, consumeSession, paymentInProgress, releaseSession } from "./checkout-use";
import type { SessionsDeps } from "./deps";
import { SESSIONS_ERRORS } from "./errors";
import { createSessionsDb, type SessionsDb } from "./models";
import { schemas } from "./schemas";

const { orFail, action } = domainErrors(SESSIONS_ERRORS);

interface Locals {
	db: SessionsDb;
	deps: SessionsDeps;
}

const SessionsService: ServiceSchema<ServiceSettingSchema, Record<string, never>, Locals> = {
	name: "sessions",
	mixins: [dbMixin("sessions", createSessionsDb)],

	actions: {
		create: {
			params: schemas.create,
			async handler(ctx: Context<{ accountId: number; domain?: unknown; customerId?: number }>) {
				// The spec's 500 for an invalid domain names the domain as sent.
				return orFail(await createSession(this.deps, ctx.params), { domain: ctx.params.domain }).sessionId;
			},
		},
		get: idempotent(domainAction(schemas.get, getSession)),
		// The dashboard: a link the customer opens to give a new card (card-update-links.ts).
		createCardUpdateLink: action(schemas.createCardUpdateLink, createCardUpdateLink),
		// POST /api/card-update-link: the link's page asks for a card update session for its own host.
		openCardUpdateLink: action(schemas.openCardUpdateLink, openCardUpdateLink),
		// For the gateway: the site that may embed the session's checkout frame.
		domain: idempotent(domainAction(schemas.domain, sessionDomain)),
		// Used by the checkout service; errors come back as values it maps to checkout codes.
		checkForCheckout: domainAction(schemas.checkForCheckout, checkForCheckout, errorAsValue),
		consume: domainAction(schemas.consume, consumeSession, errorAsValue),
		// A read: safe to retry.
		paymentInProgress: idempotent(domainAction(schemas.paymentInProgress, paymentInProgress, errorAsValue)),
		release: domainAction(schemas.use, releaseSession),
	},

	async started() {
		this.deps = {
			db: this.db,
			now: () => new Date(),
			cardUpdateTarget: (accountId, customerId) => call(this.broker, "billing.cardUpdateTarget", { accountId, customerId }),
		};
	},
};

export default SessionsService;
