// The checkout: takes the browser's encrypted card and walks the spec's
// processing order (checkout-pipeline.ts), calling sessions, accounts and
// billing. It holds the card-decryption keys and serves the public key.
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { callsThrough } from "../../shared/call";
import { config } from "../../shared/config";
import { ApiError, ApiErrorType } from "../../shared/errors";
import { createAccountCache } from "./account-cache";
import { loadCardKeyRing } from "./card-keys";
import { type CardUpdateRequest, continueCardUpdate, submitCardUpdate } from "./card-update-pipeline";
import { type CheckoutInput, continueCheckout, submitCheckout } from "./checkout-pipeline";
import { demoSession } from "./demo-session";
import type { CheckoutDeps } from "./deps";
import { createMidRouter } from "./mid-routing";
import { schemas } from "./schemas";

interface Locals {
	deps: CheckoutDeps;
}

const CheckoutService: ServiceSchema<ServiceSettingSchema, Record<string, never>, Locals> = {
	name: "checkout",

	actions: {
		// No database of its own: it is healthy when it answers.
		health: {
			params: schemas.none,
			handler: () => ({}),
		},
		key: {
			params: schemas.none,
			handler() {
				return this.deps.keys.publicJwk;
			},
		},
		submit: {
			params: schemas.submit,
			async handler(ctx: Context<CheckoutInput>) {
				const result = await submitCheckout(this.deps, ctx.params);
				if ("invalid" in result) throw new ApiError(ApiErrorType.InvalidCheckout, "Invalid checkout request", result.invalid);
				return result;
			},
		},
		// The frame, after the buyer's challenge (docs/authentication.md).
		continue: {
			params: schemas.continue,
			handler(ctx: Context<{ sessionId: string; landingDomain: string }>) {
				return continueCheckout(this.deps, ctx.params);
			},
		},
		// The hosted frame's card update (card-update-pipeline.ts): the same answers' shape as a checkout.
		updateCard: {
			params: schemas.updateCard,
			async handler(ctx: Context<CardUpdateRequest>) {
				const result = await submitCardUpdate(this.deps, ctx.params);
				if ("invalid" in result) throw new ApiError(ApiErrorType.InvalidCheckout, "Invalid card update request", result.invalid);
				return result;
			},
		},
		// The frame, after the buyer's challenge on the renewal a card update owed.
		continueCardUpdate: {
			params: schemas.continue,
			handler(ctx: Context<{ sessionId: string; landingDomain: string }>) {
				return continueCardUpdate(this.deps, ctx.params);
			},
		},
		demoSession: {
			params: schemas.demoSession,
			async handler(ctx: Context<{ host: string }>) {
				const session = config().demo ? await demoSession(callsThrough(ctx), ctx.params) : null;
				if (!session) throw new ApiError(ApiErrorType.NotFound, "The demo is off (DEMO=0) or has no demo account");
				return session;
			},
		},
	},

	events: {
		// A product, MID or blocked BIN changed: the account's cached context is not used again.
		"accounts.updated"(ctx: Context<{ accountId: number }>) {
			this.deps?.accounts.drop(ctx.params.accountId);
		},
	},

	async started() {
		const { cardPrivateKey, cardPreviousPrivateKey, cardPreviousKeyUntil, cardFingerprintKey } = config();
		if (!cardPrivateKey || !cardFingerprintKey) {
			throw new Error("CARD_PRIVATE_KEY and CARD_FINGERPRINT_KEY must be set for the checkout service (npm start generates them)");
		}
		const keys = await loadCardKeyRing({ current: cardPrivateKey, previous: cardPreviousPrivateKey, previousUntil: cardPreviousKeyUntil });
		const call = callsThrough(this.broker);
		this.deps = {
			call,
			accounts: createAccountCache(call),
			keys,
			fingerprintKey: Buffer.from(cardFingerprintKey, "base64"),
			mids: createMidRouter(call),
			now: () => new Date(),
		};
	},
};

export default CheckoutService;
