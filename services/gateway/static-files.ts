// The files the gateway serves to browsers: the SDK (public/sdk), the hosted
// card frame (public/checkout), the demo shop (public/demo), and jose's and
// Chart.js's browser builds. Every answer carries a Content-Security-Policy, nosniff and a
// Referrer-Policy; the card frame's policy lets only the site its checkout
// session is bound to embed it (frame-ancestors).

import type { IncomingMessage, ServerResponse } from "node:http";
import type { ServiceBroker } from "moleculer";
import { call } from "../../shared/call";
import { DASHBOARD_POLICY } from "./dashboard-routes";

const COMMON = {
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy": "strict-origin-when-cross-origin",
};

/** Scripts, styles and anything else that is not a page: nothing to run, no one may frame it. */
const RESOURCE_POLICY = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The demo shop: its own scripts, its inline styles, and the card frame from this origin. */
const DEMO_POLICY =
	"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * The card frame: only its own scripts; card data may only go to this origin
 * (connect-src 'self') and never through a native form submission. Embedding
 * sites: the session's host name, on any port; with no scheme the frame's own
 * applies, so a frame served over HTTPS may only be embedded by HTTPS pages.
 */
export function framePolicy(domain: string | null, inFrame = false): string {
	const site = domain && /^[a-z0-9.-]+$/.test(domain) ? `${domain}:*` : null;
	// The sandbox's 3-D Secure page is shown inside the card frame (this origin), itself on the session's site.
	const ancestors = inFrame ? (site ? `'self' ${site}` : "'self'") : (site ?? "'none'");
	// frame-src: the issuer's 3-D Secure page, which the frame shows inside itself (docs/authentication.md).
	return `default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-src 'self' https:; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors ${ancestors}`;
}

/**
 * The page the issuer's 3-D Secure challenge returns to, inside the card frame: it has no content and only tells
 * the frame that the challenge ended, so any page may embed it (the issuer's redirect carries no session).
 */
export const CHALLENGE_RETURN_POLICY = "default-src 'none'; script-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors *";

function setHeaders(res: ServerResponse, policy: string): void {
	for (const [name, value] of Object.entries(COMMON)) res.setHeader(name, value);
	// A policy set earlier for this answer (the card frame's) wins.
	if (!res.getHeader("Content-Security-Policy")) res.setHeader("Content-Security-Policy", policy);
}

const base = {
	index: ["index.html"],
	// The files are small: Range requests get the whole file (an unsatisfiable range used to fail as a 500).
	acceptRanges: false,
};

/** serve-static options for the SDK, the frame's resources, jose and Chart.js. */
export const STATIC_OPTIONS = { ...base, setHeaders: (res: ServerResponse) => setHeaders(res, RESOURCE_POLICY) };

/** serve-static options for the dashboard's pages (dashboard-routes.ts has their policy). */
export const DASHBOARD_OPTIONS = { ...base, redirect: false, setHeaders: (res: ServerResponse) => setHeaders(res, DASHBOARD_POLICY) };

/** The card update page: its own script and styles, the SDK, and the card frame from this origin. */
const UPDATE_CARD_POLICY =
	"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** serve-static options for the page a card update link opens. */
export const UPDATE_CARD_OPTIONS = { ...base, redirect: false, setHeaders: (res: ServerResponse) => setHeaders(res, UPDATE_CARD_POLICY) };

/** The customer portal's page (portal-routes.ts): the card update page's policy, as it shows the card frame too. */
export const PORTAL_OPTIONS = UPDATE_CARD_OPTIONS;

/** serve-static options for the demo shop. */
export const DEMO_OPTIONS = { ...base, redirect: false, setHeaders: (res: ServerResponse) => setHeaders(res, DEMO_POLICY) };

const SESSION_ID = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;

/**
 * Middleware of the /checkout route (moleculer-web calls it with the gateway
 * as `this`): before the file is served, the card frame's policy for the
 * session named in its URL (the SDK puts `sessionId` there). An unknown
 * session, or none, may be embedded nowhere.
 */
export function frameAncestors(
	this: { broker: Pick<ServiceBroker, "call"> },
	req: IncomingMessage,
	res: ServerResponse,
	next: (err?: unknown) => void,
): void {
	const sessionId = new URLSearchParams((req.url ?? "").split("?")[1] ?? "").get("sessionId") ?? "";
	const lookup = SESSION_ID.test(sessionId)
		? call(this.broker, "sessions.domain", { sessionId }, { timeout: 2000 }).catch(() => null)
		: Promise.resolve(null);
	const file = (req.url ?? "").split("?")[0];
	const inFrame = file.endsWith("/challenge.html");
	void lookup.then(found => {
		res.setHeader(
			"Content-Security-Policy",
			file.endsWith("/challenge-return.html") ? CHALLENGE_RETURN_POLICY : framePolicy(found?.domain ?? null, inFrame),
		);
		next();
	});
}
