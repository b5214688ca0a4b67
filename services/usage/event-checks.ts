// One usage event's checks (docs/usage.md#errors): its shape, then what its
// meter needs of it. A refused event is answered alone; the batch goes on.
import { createHash } from "node:crypto";
import { createAjv, describeAjvErrors } from "../../shared/ajv-validator";
import type { MeterDoc } from "./models";

export const MAX_EVENTS = 1000;
/** An event's properties, as JSON: at most this many bytes and keys. */
export const MAX_PROPERTIES_BYTES = 2048;
export const MAX_PROPERTIES = 50;
/** A numeric property's decimals: quantities are kept in millionths (shared/usage-pricing.ts). */
const MAX_DECIMALS = 6;
/** A period's sum stays an exact integer of millionths. */
const MAX_VALUE = 1_000_000_000;

export interface EventInput {
	id: string;
	customerId: number;
	meter: string;
	timestamp: string;
	properties?: Record<string, unknown>;
}

export type RefusalReason =
	| "INVALID_EVENT"
	| "PROPERTIES_TOO_LARGE"
	| "UNKNOWN_METER"
	| "UNKNOWN_CUSTOMER"
	| "MISSING_PROPERTY"
	| "INVALID_PROPERTY"
	| "FILTERED_OUT"
	| "TIMESTAMP_IN_FUTURE"
	| "PERIOD_CLOSED"
	| "SUBSCRIPTION_ENDED";

export const REFUSALS: Record<RefusalReason, string> = {
	INVALID_EVENT: "The event is malformed",
	PROPERTIES_TOO_LARGE: `properties may hold at most ${MAX_PROPERTIES} keys and ${MAX_PROPERTIES_BYTES} bytes of JSON`,
	UNKNOWN_METER: "The account has no meter with this code",
	UNKNOWN_CUSTOMER: "Customer not found",
	MISSING_PROPERTY: "The event lacks the property its meter reads",
	INVALID_PROPERTY: `The meter's property must be a number from 0 to ${MAX_VALUE} with at most ${MAX_DECIMALS} decimals (unique_count: a string or a number)`,
	FILTERED_OUT: "The event's properties do not match its meter's filters, so it counts in nothing",
	TIMESTAMP_IN_FUTURE: "The timestamp is more than 5 minutes ahead of the account's time",
	PERIOD_CLOSED:
		"The timestamp falls in no period that still takes events: one billed whose grace window is over, or before the subscription began",
	SUBSCRIPTION_ENDED: "The subscription had ended by this timestamp",
};

const ajv = createAjv();
const shape = ajv.compile({
	type: "object",
	additionalProperties: false,
	required: ["id", "customerId", "meter", "timestamp"],
	properties: {
		id: { type: "string", minLength: 1, maxLength: 255 },
		customerId: { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
		meter: { type: "string", pattern: "^[a-z0-9][a-z0-9_.-]{0,63}$" },
		timestamp: { type: "string", format: "date-time", maxLength: 40 },
		properties: { type: "object" },
	},
});

/** The event's shape: null when it is well formed, else why not. */
export function shapeProblem(event: unknown): { reason: RefusalReason; message: string } | null {
	if (!shape(event))
		return {
			reason: "INVALID_EVENT",
			message: describeAjvErrors(shape.errors)
				.map(e => e.message.replace(/^request /, "event "))
				.join("; "),
		};
	// RFC 3339 allows a leap second (…T23:59:60Z), which no Date holds.
	if (Number.isNaN(Date.parse((event as EventInput).timestamp)))
		return { reason: "INVALID_EVENT", message: "timestamp must be a time a clock can show (no leap second)" };
	const properties = (event as EventInput).properties ?? {};
	if (Object.keys(properties).length > MAX_PROPERTIES || Buffer.byteLength(JSON.stringify(properties)) > MAX_PROPERTIES_BYTES)
		return { reason: "PROPERTIES_TOO_LARGE", message: REFUSALS.PROPERTIES_TOO_LARGE };
	return null;
}

/** What an accepted event adds to its aggregate. */
export interface Contribution {
	/** sum, max, latest: the value in millionths; else 0. */
	value: number;
	/** unique_count: the value's hash; else null. */
	unique: string | null;
}

/** Millionths of a non-negative number with at most 6 decimals, read from its JSON text so 0.1 is exactly 100000. */
export function millionths(value: unknown): number | null {
	if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > MAX_VALUE) return null;
	const text = String(value);
	if (!/^\d+(\.\d+)?$/.test(text)) return null;
	const [whole, fraction = ""] = text.split(".");
	if (fraction.length > MAX_DECIMALS) return null;
	return Number(whole) * 1_000_000 + Number(fraction.padEnd(MAX_DECIMALS, "0"));
}

/** What the meter counts of the event, or why it counts nothing. */
export function contributionOf(meter: MeterDoc, properties: Record<string, unknown>): Contribution | RefusalReason {
	for (const [key, wanted] of Object.entries(meter.filters ?? {})) if (properties[key] !== wanted) return "FILTERED_OUT";
	if (meter.aggregation === "count") return { value: 0, unique: null };
	const raw = properties[meter.property!];
	if (raw === undefined) return "MISSING_PROPERTY";
	if (meter.aggregation === "unique_count") {
		if (typeof raw !== "string" && typeof raw !== "number") return "INVALID_PROPERTY";
		// Typed, so the string "1" and the number 1 are two values.
		return {
			value: 0,
			unique: createHash("sha256")
				.update(`${typeof raw}:${raw}`)
				.digest("base64url"),
		};
	}
	const value = millionths(raw);
	return value === null ? "INVALID_PROPERTY" : { value, unique: null };
}
