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
	// Another account's customer is unknown, whatever this account's settings: 404 first, as on every customer route.
	const [context, buyer] = await Promise.all([
		deps.call("accounts.portalContext", { accountId: input.accountId }),
		deps.call("billing.buyerSubscriptions", { accountId: input.accountId, customerId: input.id }),
	]);
	if (!buyer) return PortalError.UnknownCustomer;
	if (!context.settings.enabled) return PortalError.Off;
	if (input.returnUrl !== undefined && !returnUrlAllowed(input.returnUrl, context.settings.returnDomains))
		return PortalError.ReturnUrlRefused;
	return storeLink(deps, input, PORTAL_LINK_MINUTES);
}

/** A sign-in email's link opens within this long: an email can take a few minutes to arrive. */
export const SIGN_IN_LINK_MINUTES = 15;

/** A sign-in email's link (docs/portal.md#email-sign-in), made by notifications as it sends the email. */
export function signInLink(deps: PortalDeps, input: { accountId: number; id: number; baseUrl: string }): Promise<PortalLink> {
	return storeLink(deps, input, SIGN_IN_LINK_MINUTES);
}

async function storeLink(deps: PortalDeps, input: LinkInput, minutes: number): Promise<PortalLink> {
	const token = randomBytes(32).toString("base64url");
	const createdAt = deps.now();
	const expiresAt = new Date(createdAt.getTime() + minutes * 60_000);
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

/**
 * POST /portal/api/sign-in: a buyer asks for a link by email. The same answer whatever the address: whether it has a
 * subscription here is told only to its mailbox. Refused when the account has not turned email sign-in on, or its
 * emails are off (nothing could be sent).
 */
export async function requestSignIn(
	deps: PortalDeps,
	input: { accountId: number; email: string },
): Promise<{ requested: true } | PortalError> {
	const context = await deps.call("accounts.portalContext", { accountId: input.accountId }).catch(() => null);
	if (!context?.settings.enabled || !context.settings.emailSignIn || !context.emailsEnabled) return PortalError.SignInOff;
	const email = input.email.trim().toLowerCase();
	const buyer = await deps.call("billing.buyerByEmail", { accountId: input.accountId, email });
	if (buyer) await deps.call("notifications.enqueuePortalSignIn", { accountId: input.accountId, to: email, ...buyer });
	return { requested: true };
}
