// Checkout sessions: created by the merchant's server for one domain, valid
// for 5 minutes, consumed by the first successful checkout.
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { domainAction, errorAsValue, idempotent } from "../../shared/action";
import { call } from "../../shared/call";
import { dbMixin } from "../../shared/db.mixin";
import { ApiError, ApiErrorType } from "../../shared/errors";
import { createCardUpdateLink, openCardUpdateLink } from "./card-update-links";
import { createSession, getSession, sessionDomain } from "./checkout-sessions";
import { checkForCheckout, consumeSession, paymentInProgress, releaseSession } from "./checkout-use";
import type { SessionsDeps } from "./deps";
import { SessionsError } from "./errors";
import { createSessionsDb, type SessionsDb } from "./models";
import { schemas } from "./schemas";

const NOT_UPDATABLE = "This customer's card cannot be updated: it is unsubscribed or never became active";

/** A card update refused for its customer: the same answers for a session (POST /api/session?customerId=) and a link. */
function refuseCardUpdate(refusal: SessionsError.UnknownCustomer | SessionsError.NotUpdatable): never {
	if (refusal === SessionsError.UnknownCustomer) throw new ApiError(ApiErrorType.NotFound, "No such customer");
	throw new ApiError(ApiErrorType.Conflict, NOT_UPDATABLE);
}

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
				const result = await createSession(this.deps, ctx.params);
				if (result === SessionsError.InvalidDomain) {
					throw new ApiError(ApiErrorType.InvalidSessionDomain, "Invalid session domain", { domain: ctx.params.domain });
				}
				if (typeof result === "string") refuseCardUpdate(result);
				return result.sessionId;
			},
		},
		get: idempotent(domainAction(schemas.get, getSession)),
		// The dashboard: a link the customer opens to give a new card (card-update-links.ts).
		createCardUpdateLink: domainAction(schemas.createCardUpdateLink, createCardUpdateLink, result =>
			typeof result === "string" ? refuseCardUpdate(result) : result,
		),
		// POST /api/card-update-link: the link's page asks for a card update session for its own host.
		openCardUpdateLink: domainAction(schemas.openCardUpdateLink, openCardUpdateLink, result => {
			if (result === SessionsError.UnknownLink)
				throw new ApiError(ApiErrorType.NotFound, "This card update link is unknown or has expired");
			if (result === SessionsError.NotUpdatable) refuseCardUpdate(result);
			if (typeof result === "string") throw new ApiError(ApiErrorType.BadRequest, "This page's address cannot show a card update");
			return result;
		}),
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
