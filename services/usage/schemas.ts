// The usage service's actions' parameters: JSON types, never coerced. A batch's events are checked one by one
// (event-checks.ts), so one malformed event is refused alone; the batch's own shape is checked here.
import { AGGREGATIONS } from "../../shared/contracts/usage";
import { listParams } from "../../shared/list-page";
import { id, params } from "../../shared/schemas";
import { MAX_EVENTS } from "./event-checks";

const code = { type: "string", pattern: "^[a-z0-9][a-z0-9_.-]{0,63}$" };
const property = { type: "string", minLength: 1, maxLength: 100 };
const isoDate = { type: "string", format: "date-time" };

export const schemas = {
	ingest: params(
		{
			accountId: id,
			events: {
				type: "array",
				minItems: 1,
				maxItems: MAX_EVENTS,
				items: {},
				errorMessage: { maxItems: `may hold at most ${MAX_EVENTS} events per request` },
			},
		},
		["accountId", "events"],
	),
	createMeter: params(
		{
			accountId: id,
			code,
			name: { type: "string", minLength: 1, maxLength: 200 },
			aggregation: { enum: AGGREGATIONS },
			property,
			filters: {
				type: "object",
				maxProperties: 20,
				propertyNames: { maxLength: 100 },
				additionalProperties: { anyOf: [{ type: "string", maxLength: 200 }, { type: "number" }, { type: "boolean" }] },
			},
		},
		["accountId", "code", "name", "aggregation"],
	),
	list: params({ accountId: id }),
	meters: params({ accountId: id, codes: { type: "array", maxItems: 100, items: code } }, ["accountId"]),
	closePeriod: params(
		{
			accountId: id,
			customerId: id,
			period: { type: "integer", minimum: 0 },
			start: isoDate,
			end: isoDate,
			nextEnd: { anyOf: [isoDate, { type: "null" }] },
			meters: { type: "array", maxItems: 100, items: code },
			final: { type: "boolean" },
		},
		["accountId", "customerId", "period", "start", "end", "nextEnd", "meters"],
	),
	currentUsage: params({ accountId: id, customerId: id, meters: { type: "array", maxItems: 100, items: code } }),
	customerEvents: params({ accountId: id, id, ...listParams }, ["accountId", "id"]),
	clockMoved: params({ accountId: id, at: isoDate }),
};
