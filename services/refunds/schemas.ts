// The JSON Schemas of the refunds service's actions' parameters (Ajv; nothing is coerced).
import { id, params } from "../../shared/schemas";

export const schemas = {
	refund: params(
		{
			accountId: id,
			id,
			// A positive decimal, kept as text so no digit is lost to a float; whether its decimals fit the
			// transaction's currency is the refund's answer (200, success false), since only billing knows the currency.
			amountToRefund: {
				type: "string",
				maxLength: 40,
				pattern: "^([0-9]*[1-9][0-9]*(\\.[0-9]+)?|[0-9]+\\.[0-9]*[1-9][0-9]*)$",
				errorMessage: "must be a positive decimal number such as 4.99",
			},
			idempotencyKey: { type: "string", minLength: 1, maxLength: 255 },
		},
		["accountId", "id"],
	),
};
