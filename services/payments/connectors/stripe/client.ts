// What every Stripe operation of the connector shares: a client per MID's
// secret key, Stripe's idempotency keys for an attempt, the dialect's
// differences (localstripe), and the card put on the MID's Stripe account.
import { randomBytes } from "node:crypto";
import Stripe from "stripe";
import type { ChallengeAsked, MidContext, VaultCard } from "../connector";

/** Pinned, not the library's default: upgrading the library must not change what Stripe answers (its types follow it, so tsc tells). */
export const STRIPE_API_VERSION = "2026-10-28.endive";

/** What the connector made of one card on one MID's Stripe account. */
export interface StripeCardKeys {
	customer: string;
	paymentMethod: string;
}

/** Where the connector keeps, per MID and vault card, what it made on that MID's Stripe account. */
export interface StripeKeyStore {
	get(midId: number, cardToken: string): Promise<StripeCardKeys | null>;
	set(midId: number, cardToken: string, value: StripeCardKeys): Promise<void>;
}

/** Stripe's idempotency key for one step of one attempt. */
export type StepKeys = (step: string) => Stripe.RequestOptions;

export interface StripeClients {
	/** The MID's client; null when the MID has no secret key. */
	clientOf(mid: MidContext): Stripe | null;
	keyStore: StripeKeyStore;
	/** Stripe itself (or stripe-mock), not localstripe. */
	fullStripe: boolean;
	/** A card needs no redirect; without this Stripe refuses a server-side confirm that has no return_url. */
	noRedirects: { automatic_payment_methods?: { enabled: true; allow_redirects: "never" } };
	/** Where the issuer's 3-D Secure page sends a buyer back: only on Stripe itself (localstripe shows no issuer page). */
	returnUrl: string | null;
}

export function createStripeClients(options: {
	apiBase?: string;
	timeout: number;
	keyStore: StripeKeyStore;
	dialect?: "stripe" | "localstripe";
	returnUrl?: string;
}): StripeClients {
	const server = serverOf(options.apiBase);
	const clients = new Map<string, Stripe>();
	const fullStripe = (options.dialect ?? "stripe") === "stripe";
	return {
		clientOf(mid) {
			if (!mid.secretKey) return null;
			let client = clients.get(mid.secretKey);
			if (!client) {
				// No retries by the library: a failure shows once, and the caller retries with the same key after a lookup.
				client = new Stripe(mid.secretKey, {
					...server,
					apiVersion: STRIPE_API_VERSION,
					maxNetworkRetries: 0,
					telemetry: false,
					timeout: options.timeout,
				});
				clients.set(mid.secretKey, client);
			}
			return client;
		},
		keyStore: options.keyStore,
		fullStripe,
		noRedirects: fullStripe ? { automatic_payment_methods: { enabled: true, allow_redirects: "never" as const } } : {},
		returnUrl: fullStripe ? (options.returnUrl ?? null) : null,
	};
}

/** The library's host, port and protocol for another server; none for Stripe itself. */
function serverOf(apiBase: string | undefined): { host?: string; port?: string; protocol?: "http" | "https" } {
	if (!apiBase) return {};
	const url = new URL(apiBase);
	const protocol = url.protocol === "http:" ? "http" : "https";
	return { host: url.hostname, port: url.port || (protocol === "http" ? "80" : "443"), protocol };
}

/**
 * Stripe's idempotency keys for one attempt: ours, the step and the attempt. Unique per attempt, because Stripe
 * replays a key's first answer for 24 h: a retry after a lookup cancelled the first intent (or after a 5xx) must make
 * a new one. Within the attempt they stop a request the library sends again (on a closed connection) from acting twice.
 */
export function keysOf(idempotencyKey: string): StepKeys {
	const attempt = randomBytes(6).toString("hex");
	return step => ({ idempotencyKey: `${idempotencyKey}:${step}:${attempt}` });
}

/**
 * An intent's (PaymentIntent's or SetupIntent's) creation options when the buyer is present to take a challenge: a card
 * only, so that its 3-D Secure redirect returns to our page (a return_url is given at confirmation), and 3-D Secure
 * asked for whatever the issuer's rules when the product says ALWAYS (docs/authentication.md).
 */
export function buyerPresent(clients: StripeClients, always: boolean) {
	return {
		...(clients.returnUrl ? { payment_method_types: ["card"] } : clients.noRedirects),
		...(always ? { payment_method_options: { card: { request_three_d_secure: "any" as const } } } : {}),
	};
}

/**
 * The issuer's page for a PaymentIntent or SetupIntent that requires action. localstripe has none (its
 * `use_stripe_sdk` action is settled through its own `_authenticate` route, as its stripe.js does), so its dialect
 * shows an empty page and the tests act as the issuer.
 */
export function challengeUrlOf(clients: StripeClients, intent: Stripe.PaymentIntent | Stripe.SetupIntent): string | null {
	const url = intent.next_action?.redirect_to_url?.url;
	if (url) return url;
	return clients.fullStripe ? null : "about:blank";
}

/** MMYY → Stripe's month and four-digit year. */
function expiryOf(card: VaultCard): { exp_month: number; exp_year: number } {
	// MMYY, as the checkout takes it (cardExpiry).
	return { exp_month: Number(card.expiry.slice(0, 2)), exp_year: 2000 + Number(card.expiry.slice(2, 4)) };
}

/** The card on the MID's Stripe account: made on first use (Customer, PaymentMethod, attach), then kept. */
export async function cardOnAccount(
	clients: StripeClients,
	stripe: Stripe,
	op: { mid: MidContext; card: VaultCard; idempotencyKey: string },
	cvc: string | undefined,
	keys: StepKeys,
): Promise<StripeCardKeys> {
	const { keyStore } = clients;
	const kept = await keyStore.get(op.mid.midId, op.card.cardToken);
	if (kept) return kept;
	const customer = await stripe.customers.create({ metadata: { card_token: op.card.cardToken } }, keys("customer"));
	const method = await stripe.paymentMethods.create(
		{ type: "card", card: { number: op.card.pan, ...expiryOf(op.card), ...(cvc ? { cvc } : {}) } },
		keys("payment_method"),
	);
	// Issuers may decline here already (402): the caller's answer is then that decline.
	await stripe.paymentMethods.attach(method.id, { customer: customer.id }, keys("attach"));
	const value = { customer: customer.id, paymentMethod: method.id };
	await keyStore.set(op.mid.midId, op.card.cardToken, value);
	return value;
}

/** The challenge an intent just confirmed asks the buyer to take, if it asks one and its issuer's page is known. */
export function challengeAsked(clients: StripeClients, intent: Stripe.PaymentIntent | Stripe.SetupIntent): ChallengeAsked | null {
	if (intent.status !== "requires_action") return null;
	const url = challengeUrlOf(clients, intent);
	return url ? { status: "AWAITING_BUYER", reference: intent.id, challengeUrl: url } : null;
}
