// The JSON Schemas of the checkout service's actions' parameters (Ajv; nothing is coerced).
import { params, shortText } from "../../shared/schemas";

const jwe = { type: "string", minLength: 1, maxLength: 4096 };
const sessionId = { type: "string", pattern: "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$" };
const landingDomain = { type: "string", minLength: 1, maxLength: 253 };
const cardExpiry = { type: "string", pattern: "^(0[1-9]|1[0-2])[0-9]{2}$" };

export const schemas = {
	submit: params(
		{
			sessionId,
			productId: { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
			email: { type: "string", format: "email", maxLength: 254 },
			name: shortText,
			lastName: { type: "string", maxLength: 200 },
			landingDomain,
			additionalData: { type: "object", maxProperties: 50 },
			promotionCode: { type: "string", pattern: "^[A-Za-z0-9_-]{3,40}$" },
			encryptedCardNumber: jwe,
			encryptedCvc: jwe,
			cardExpiry,
		},
		["sessionId", "productId", "email", "name", "landingDomain", "encryptedCardNumber", "encryptedCvc", "cardExpiry"],
	),
	updateCard: params({ sessionId, landingDomain, encryptedCardNumber: jwe, encryptedCvc: jwe, cardExpiry }),
	continue: params({ sessionId, landingDomain }),
	demoSession: params({ host: { type: "string", maxLength: 300 } }),
	none: params({}),
};
