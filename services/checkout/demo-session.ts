// GET /demo/session: the /demo page's stand-in for a merchant's server. It
// creates a session of the sandbox demo account for the host the page was
// served from, which a real merchant would do with its API token.
import type { ServiceBroker } from "moleculer";

export interface DemoSession {
	sessionId: string;
	domain: string;
	products: { id: number; name: string; amount: number; currency: string; billing: string }[];
}

export async function demoSession(broker: Pick<ServiceBroker, "call">, input: { host: string }): Promise<DemoSession | null> {
	const demo = await broker.call<{ accountId: number; products: DemoSession["products"] } | null>("accounts.demoAccount");
	if (!demo) return null;
	const domain = input.host.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
	const sessionId = await broker.call<string, { accountId: number; domain: string }>("sessions.create", { accountId: demo.accountId, domain });
	const products = demo.products.map(({ id, name, amount, currency, billing }) => ({ id, name, amount, currency, billing }));
	return { sessionId, domain, products };
}
