// GET /demo/session: the /demo page's stand-in for a merchant's server. It
// creates a session of the sandbox demo account for the host the page was
// served from, which a real merchant would do with its API token.
import type { Call } from "../../shared/call";

export interface DemoSession {
	sessionId: string;
	domain: string;
	products: { id: number; name: string; amount: number; currency: string; billing: string }[];
}

export async function demoSession(call: Call, input: { host: string }): Promise<DemoSession | null> {
	const demo = await call("accounts.demoAccount", {});
	if (!demo) return null;
	const domain = input.host.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
	const sessionId = await call("sessions.create", { accountId: demo.accountId, domain });
	const products = demo.products.map(({ id, name, amount, currency, billing }) => ({ id, name, amount, currency, billing }));
	return { sessionId, domain, products };
}
