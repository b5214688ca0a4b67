// POST /api/customer/{id}/portal-session (docs/portal.md#links): a single-use
// link the merchant's server redirects its buyer to. Its token goes in the
// URL's fragment, which browsers send to no server; the page trades it once,
// within PORTAL_LINK_MINUTES, for a session (buyer-sessions.ts).
import { randomBytes } from "node:crypto";
import type { PortalLanguage } from "../../shared/contracts/accounts";
import { sha256Hex } from "../../shared/crypto";
import type { PortalDeps } from "./deps";
import { PortalError } from "./errors";

/** How long a link can be opened (Stripe's portal: 5 minutes). */
export const PORTAL_LINK_MINUTES = 5;

export interface PortalLink {
	url: string;
	/** ISO 8601: when the link can no longer be opened. */
	expiresAt: string;
}

export interface LinkInput {
	accountId: number;
	/** The customer (the path's id). */
	id: number;
	returnUrl?: string;
	locale?: PortalLanguage;
	/** Where the portal is served: PUBLIC_BASE_URL, else the request's own origin (the gateway sets it). */
	baseUrl: string;
}

/** Whether `url` is https (http for a local host) on one of the domains, or a subdomain of one. */
export function returnUrlAllowed(url: string, domains: string[]): boolean {
	let parsed: URL;
	try {
		parsed = new URL(url);
	} catch {
		return false;
	}
	const host = parsed.hostname.toLowerCase();
	const local = host === "localhost" || host === "127.0.0.1";
	if (parsed.protocol !== "https:" && !(local && parsed.protocol === "http:")) return false;
	if (parsed.username || parsed.password) return false;
	return domains.some(domain => host === domain || host.endsWith(`.${domain}`));
}

export async function createPortalLink(deps: PortalDeps, input: LinkInput): Promise<PortalLink | PortalError> {
	const context = await deps.call("accounts.portalContext", { accountId: input.accountId });
	if (!context.settings.enabled) return PortalError.Off;
	if (input.returnUrl !== undefined && !returnUrlAllowed(input.returnUrl, context.settings.returnDomains))
		return PortalError.ReturnUrlRefused;
	const buyer = await deps.call("billing.buyerSubscriptions", { accountId: input.accountId, customerId: input.id });
	if (!buyer) return PortalError.UnknownCustomer;
	const token = randomBytes(32).toString("base64url");
	const createdAt = deps.now();
	const expiresAt = new Date(createdAt.getTime() + PORTAL_LINK_MINUTES * 60_000);
	await deps.db.links.create({
		_id: sha256Hex(token),
		accountId: input.accountId,
		customerId: input.id,
		returnUrl: input.returnUrl ?? null,
		locale: input.locale ?? null,
		createdAt,
		expiresAt,
		usedAt: null,
	});
	return { url: `${input.baseUrl}/portal/#${token}`, expiresAt: expiresAt.toISOString() };
}
