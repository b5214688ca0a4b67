// A production account whose MIDs are on Stripe, with the service's Stripe
// connector talking to localstripe (STRIPE_API_BASE), which keeps state: what
// the Stripe tests start, and the official library to read localstripe back.
import type Stripe from "stripe";
import { type StripeServer, startLocalstripe, stripeClient } from "../../dev/stripe-servers";
import { startApp, type TestApp } from "../setup/app";
import { createShop, type Shop } from "./checkout";

export interface LocalstripeShop {
	server: StripeServer;
	stripe: Stripe;
	app: TestApp;
	shop: Shop;
	stop(): Promise<void>;
}

/** A live-mode key localstripe takes: each shop its own. */
export const liveKey = () => `sk_live_${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;

export async function startLocalstripeShop(): Promise<LocalstripeShop> {
	const server = await startLocalstripe();
	const app = await startApp({ env: { STRIPE_API_BASE: server.url, STRIPE_API_DIALECT: "localstripe" } });
	const shop = await createShop(app, { environment: "production", processor: { type: "stripe", secretKey: liveKey() } });
	return {
		server,
		stripe: stripeClient(server),
		app,
		shop,
		stop: async () => {
			await app.stop();
			await server.stop();
		},
	};
}
