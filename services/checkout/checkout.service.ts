// The checkout: takes the browser's encrypted card and walks the spec's
// processing order (checkout-pipeline.ts), calling sessions, accounts,
// payments (the vault and the card's verification) and billing; the hosted
// frame's card update takes the same checks (card-update-pipeline.ts). It
// holds the card-decryption keys and serves the public key.
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { domainErrors } from "../../shared/action";
import { callsThrough } from "../../shared/call";
import { config } from "../../shared/config";
import { createAccountCache } from "./account-cache";
import { loadCardKeyRing } from "./card-keys";
import { type CardUpdateRequest, continueCardUpdate, submitCardUpdate } from "./card-update-pipeline";
import type { InvalidCheckout } from "./checkout-answers";
import { type CheckoutInput, continueCheckout, submitCheckout } from "./checkout-pipeline";
import { demoSession } from "./demo-session";
import type { CheckoutDeps } from "./deps";
import { CHECKOUT_ERRORS, CheckoutError } from "./errors";
import { createMidRouter } from "./mid-routing";
import { schemas } from "./schemas";

interface Locals {
	deps: CheckoutDeps;
}

const { orFail } = domainErrors(CHECKOUT_ERRORS);

/** The answer of a request that could be read; one that could not fails with its fields as the answer's details. */
function validOrFail<T extends object>(result: T | InvalidCheckout, error: CheckoutError): T {
	return "invalid" in result ? orFail<T>(error, result.invalid) : result;
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
				return validOrFail(await submitCheckout(this.deps, ctx.params), CheckoutError.InvalidCheckout);
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
				return validOrFail(await submitCardUpdate(this.deps, ctx.params), CheckoutError.InvalidCardUpdate);
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
				return orFail(session ?? CheckoutError.DemoOff);
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
			mids: createMidRouter(),
			now: () => new Date(),
		};
	},
};

export default CheckoutService;
