// The JSON Schemas of the payments service's actions' parameters (Ajv; nothing is coerced).
import { ADYEN_REDIRECT_RESULT_PATTERN, ADYEN_RETURN_TOKEN_PATTERN, DISPUTE_EVIDENCE_FIELDS } from "../../shared/contracts/payments";
import { id, params } from "../../shared/schemas";

const key = { type: "string", minLength: 1, maxLength: 200 };
const cardToken = { type: "string", pattern: "^card_[0-9a-f]{32}$" };
const amount = { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER };
const currency = { type: "string", pattern: "^[A-Z]{3}$" };
const money = { idempotencyKey: key, midId: id, cardToken, amount, currency };
/** The account's time an operation is made at (a sandbox's test clock); the sandbox judges by it, processors ignore it. */
const at = { type: "string", format: "date-time" };
// A compact JWE: five base64url parts.
const jwe = { type: "string", maxLength: 4096, pattern: "^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]*){4}$" };

export const schemas = {
	saveCard: params({
		midId: id,
		attemptId: { type: "string", pattern: "^[A-Za-z0-9_-]{8,64}$" },
		card: params({
			pan: { type: "string", pattern: "^[0-9]{12,19}$" },
			expiry: { type: "string", pattern: "^(0[1-9]|1[0-2])[0-9]{2}$" },
			cvc: { type: "string", pattern: "^[0-9]{3,4}$" },
		}),
	}),
	charge: params(
		{
			...money,
			initiator: { enum: ["customer", "merchant"] },
			at,
			networkTransactionId: { type: "string", minLength: 1, maxLength: 100 },
		},
		[...Object.keys(money), "initiator"],
	),
	firstPayment: params(
		{
			...money,
			kind: { enum: ["charge", "authorize", "setup"] },
			challengeUntil: { type: "string", format: "date-time" },
			authenticate: { enum: ["ALWAYS", "WHEN_REQUIRED"] },
			at,
		},
		[...Object.keys(money), "kind", "challengeUntil"],
	),
	sandboxChallenge: params({ challengeId: { type: "string", pattern: "^sbx3ds_[0-9a-f]{32}$" }, result: { enum: ["complete", "fail"] } }),
	capture: params({ idempotencyKey: key, authorizationId: id, amount }),
	void: params({ idempotencyKey: key, authorizationId: id }),
	refund: params({ idempotencyKey: key, processorTransactionId: id, amount }),
	lookup: params({ idempotencyKey: key }),
	none: params({}),
	sandboxNotices: params({ until: { type: "string", format: "date-time" }, accountId: id }, ["until"]),
	sandboxNoticesDone: params({ ids: { type: "array", maxItems: 1000, items: { type: "string", minLength: 1, maxLength: 200 } } }),
	submitDisputeEvidence: params({
		midId: id,
		reference: { type: "string", minLength: 1, maxLength: 200 },
		evidence: params(Object.fromEntries(DISPUTE_EVIDENCE_FIELDS.map(field => [field, { type: "string", maxLength: 20_000 }])), []),
	}),
	storeCredentials: params({ midId: id, type: { enum: ["stripe", "adyen"] }, sealedSecretKey: jwe, sealedWebhookSecret: jwe }, [
		"midId",
		"type",
		"sealedSecretKey",
	]),
	// The body as Stripe sent it (the gateway's limit: 1 MB), and its Stripe-Signature header when there was one.
	stripeEvent: params(
		{ midId: id, payload: { type: "string", minLength: 1, maxLength: 1_048_576 }, signature: { type: "string", maxLength: 4096 } },
		["midId", "payload"],
	),
	// The body as Adyen sent it (the gateway's limit: 1 MB).
	adyenNotification: params({ midId: id, payload: { type: "string", minLength: 1, maxLength: 1_048_576 } }),
	// The buyer back from Adyen's page: each only when well-formed (the gateway drops what is not).
	adyenReturn: params(
		{
			token: { type: "string", pattern: ADYEN_RETURN_TOKEN_PATTERN },
			redirectResult: { type: "string", maxLength: 5_000, pattern: ADYEN_REDIRECT_RESULT_PATTERN },
		},
		[],
	),
	sandboxOperations: params(
		{
			cardBin: { type: "string", pattern: "^[0-9]{6}$" },
			kind: { enum: ["verify", "setup", "charge", "authorize", "capture", "void", "refund"] },
			// Processor errors are not kept (they moved no money), so only final outcomes can be filtered.
			status: { enum: ["APPROVED", "DECLINED"] },
			midId: id,
		},
		[],
	),
};
