// The JSON Schemas of the sessions service's actions' parameters (Ajv; nothing is coerced).
import { id, params } from "../../shared/schemas";

/** A UUID in its 36-character form, any letter case (stored ids are lower case). */
export const sessionIdSchema = { type: "string", pattern: "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$" };

export const schemas = {
	// Any domain value reaches the domain logic, which answers the spec's 500 for a bad one.
	// A checkout session may name the coupon its checkout applies: by id or by promotion code (docs/coupons.md).
	create: params(
		{ accountId: id, domain: {}, customerId: id, couponId: id, promotionCode: { type: "string", pattern: "^[A-Za-z0-9_-]{3,40}$" } },
		["accountId"],
	),
	createCardUpdateLink: params({ accountId: id, customerId: id, baseUrl: { type: "string", pattern: "^https?://[^/]+$", maxLength: 300 } }),
	openCardUpdateLink: params({ token: { type: "string", pattern: "^[A-Za-z0-9_-]{43}$" }, domain: { type: "string", maxLength: 300 } }),
	get: params({ accountId: id, sessionId: sessionIdSchema }),
	domain: params({ sessionId: sessionIdSchema }),
	checkForCheckout: params(
		{ sessionId: sessionIdSchema, landingDomain: { type: "string", maxLength: 253 }, purpose: { enum: ["checkout", "cardUpdate"] } },
		["sessionId", "landingDomain"],
	),
	use: params({ sessionId: sessionIdSchema, attemptId: { type: "string", pattern: "^[A-Za-z0-9_-]{8,64}$" } }),
	consume: params({ sessionId: sessionIdSchema, attemptId: { type: "string", pattern: "^[A-Za-z0-9_-]{8,64}$" }, customerId: id }, [
		"sessionId",
		"attemptId",
	]),
	paymentInProgress: params(
		{ sessionId: sessionIdSchema, landingDomain: { type: "string", maxLength: 253 }, purpose: { enum: ["checkout", "cardUpdate"] } },
		["sessionId", "landingDomain"],
	),
};
