// The JSON Schemas of the metrics service's actions' parameters (Ajv; nothing is coerced).
import { METRICS_GRANULARITIES } from "../../shared/contracts/metrics";
import { dateRangeParams } from "../../shared/list-page";
import { id, params } from "../../shared/schemas";

const currency = { type: "string", pattern: "^[A-Z]{3}$" };
const day = { type: "string", pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$" };
const eventId = { type: "string", minLength: 1, maxLength: 100 };

export const schemas = {
	// GET /api/metrics (metrics-query.ts checks what a schema cannot: real days, the range's length, one filter).
	figures: params(
		{
			accountId: id,
			...dateRangeParams,
			granularity: { enum: [...METRICS_GRANULARITIES] },
			productId: id,
			midId: id,
			currency,
		},
		["accountId"],
	),
	// Billing's relay: entries under their events' ids (shared/contracts/metrics.ts); the counts are checked by billing.
	apply: params(
		{
			entries: {
				type: "array",
				items: params({
					eventId,
					entry: params({ accountId: id, currency, day, counts: { type: "object" } }),
				}),
			},
			released: { type: "array", items: params({ eventId, month: { type: "string", minLength: 1, maxLength: 100 } }) },
		},
		["entries"],
	),
	clockMoved: params({ accountId: id, at: { type: "string", format: "date-time" } }),
};
