// The JSON Schemas of the notifications service's actions' parameters (Ajv; nothing is coerced).
import { EVENT_TYPES } from "../../shared/contracts/notifications";
import { listParams } from "../../shared/list-page";
import { id, params } from "../../shared/schemas";
import { LIST_FILTERS } from "./delivery-views";

/** A UUID in its 36-character form, any letter case (stored ids are lower case). */
const eventId = { type: "string", pattern: "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$" };
/** A local date-time as the API prints it: `2026-11-22T14:03:05.123`. */
const localDateTime = { type: "string", pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}$" };

const webhookEvent = {
	id: eventId,
	type: { enum: EVENT_TYPES },
	createdAt: localDateTime,
	accountId: id,
	customerId: id,
	// A union with null, not anyOf: Ajv's coercion would turn null into 0 in an integer branch.
	transaction_id: { type: ["integer", "null"], minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
	data: { type: "object" },
};

/** The most events one enqueueAll takes (the relay's batches are smaller). */
export const MAX_EVENTS_PER_ENQUEUE = 1000;

export const schemas = {
	enqueueAll: params(
		{ events: { type: "array", minItems: 1, maxItems: MAX_EVENTS_PER_ENQUEUE, items: params(webhookEvent) }, resent: { type: "boolean" } },
		["events"],
	),
	list: params({ accountId: id, status: { enum: LIST_FILTERS }, limit: { type: "integer", minimum: 1, maximum: 1000 } }, ["accountId"]),
	redeliverAccount: params({ accountId: id }),
	redeliver: params({ eventId, accountId: id }, ["eventId"]),
	events: params(
		{
			accountId: id,
			...listParams,
			after: { type: "string", minLength: 1, maxLength: 1000 },
			type: { enum: EVENT_TYPES },
			customerId: id,
		},
		["accountId"],
	),
	getEvent: params({ accountId: id, id: eventId }),
	customerEmails: params({ accountId: id, customerId: id }),
	enqueuePortalSignIn: params({
		accountId: id,
		customerId: id,
		to: { type: "string", minLength: 3, maxLength: 254 },
		name: { type: "string", maxLength: 200 },
		productId: id,
	}),
};
