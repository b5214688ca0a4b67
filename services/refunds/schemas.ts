import { id, params } from "../../shared/schemas";

export const schemas = {
	refund: params(
		{
			accountId: id,
			id,
			// Any text: a bad amount is answered 200 {success: false} with a message, as the spec's refund answers are.
			amountToRefund: { type: "string", maxLength: 40 },
			idempotencyKey: { type: "string", minLength: 1, maxLength: 255 },
		},
		["accountId", "id"],
	),
};
