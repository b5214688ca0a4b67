// The portal's actions' parameters. `sessionToken` (the cookie), `csrfToken` (X-CSRF-Token) and `domain` (the page's
// host) are set by the gateway, which refuses them from a request; the rest is the page's JSON, never coerced.
import { PORTAL_LANGUAGES } from "../../shared/contracts/accounts";
import { id, params } from "../../shared/schemas";

const token = { type: "string", maxLength: 100 };
const session = { sessionToken: token, csrfToken: token };
const onSubscription = (more: Record<string, object> = {}, required: string[] = []) =>
	params({ ...session, id, ...more }, ["id", ...required]);

export const schemas = {
	createLink: params(
		{
			accountId: id,
			id,
			returnUrl: { type: "string", minLength: 1, maxLength: 2000 },
			locale: { enum: PORTAL_LANGUAGES },
			baseUrl: { type: "string", minLength: 1, maxLength: 2000 },
		},
		["accountId", "id", "baseUrl"],
	),
	open: params({ token }),
	signIn: params({ accountId: id, email: { type: "string", format: "email", maxLength: 254 } }),
	signInLink: params({ accountId: id, id, baseUrl: { type: "string", minLength: 1, maxLength: 2000 } }),
	session: params(session, []),
	subscription: onSubscription(),
	quote: onSubscription({ productId: id, quantity: { type: "integer", minimum: 1, maximum: 10_000 } }),
	change: onSubscription({ quoteId: { type: "string", pattern: "^q_[0-9a-f]{32}$" } }, ["quoteId"]),
	cancel: onSubscription(
		{
			when: { enum: ["period_end", "now"] },
			reason: { type: "string", minLength: 1, maxLength: 100 },
			comment: { type: "string", maxLength: 1000 },
		},
		["when", "reason"],
	),
	cardSession: onSubscription({ domain: { type: "string", minLength: 1, maxLength: 253 } }, ["domain"]),
};
