// The invoicing service's action parameters: the merchant's lists and reads,
// the buyer's signed links, and billing's requests (shared/contracts/invoicing.ts).
import { CHARGED_LINE_KINDS } from "../../shared/contracts/invoicing";
import { dateRangeParams, listParams } from "../../shared/list-page";
import { id, params } from "../../shared/schemas";

const nullable = (schema: object) => ({ anyOf: [schema, { type: "null" }] });
const instant = { type: "string", format: "date-time" };
const minor = { type: "integer" };
const tax = params({ rateBps: { type: "integer", minimum: 0, maximum: 10_000 }, inclusive: { type: "boolean" } });

const chargedLine = params(
	{
		kind: { enum: CHARGED_LINE_KINDS },
		productId: id,
		quantity: { type: "integer", minimum: 1 },
		unitAmount: minor,
		amount: minor,
		from: nullable(instant),
		to: nullable(instant),
		tax,
		// Billing's own record of a usage line (shared/contracts/invoicing.ts UsageDetail), shown as it came.
		usage: { type: "object" },
	},
	["kind", "productId", "quantity", "unitAmount", "amount", "from", "to"],
);

const chargedTransaction = params({
	id,
	accountId: id,
	customerId: id,
	productId: id,
	type: { type: "string", maxLength: 40 },
	status: { type: "string", maxLength: 40 },
	amount: minor,
	currency: { type: "string", pattern: "^[A-Z]{3}$" },
	timestamp: instant,
	midName: { type: "string", maxLength: 200 },
	processorReference: nullable({ type: "string", maxLength: 200 }),
	originalTransactionId: nullable(id),
	creditApplied: { type: "integer", minimum: 0 },
	discount: nullable(params({ couponId: id, code: nullable({ type: "string", maxLength: 40 }), amount: { type: "integer", minimum: 0 } })),
	billed: nullable(params({ lines: { type: "array", items: chargedLine, maxItems: 100 }, tax })),
});

const party = params({
	name: { type: "string", maxLength: 400 },
	email: nullable({ type: "string", maxLength: 400 }),
	address: nullable({ type: "string", maxLength: 2000 }),
	taxId: nullable({ type: "string", maxLength: 100 }),
});

// The customer is shown in the event as billing made it (CustomerView): an object, not checked field by field here.
const issueRequest = params({
	transaction: chargedTransaction,
	original: nullable(chargedTransaction),
	buyer: party,
	customer: nullable({ type: "object" }),
});

export const schemas = {
	issue: params({ accountId: id, requests: { type: "array", items: issueRequest, minItems: 1, maxItems: 1000 } }),
	getById: params({ accountId: id, id }),
	// Invoices and credit notes: lists, one by id, and the buyer's signed link.
	documents: params({ accountId: id, ...listParams, ...dateRangeParams, customerId: id }, ["accountId"]),
	// Any text: a signature that does not match is a 404, whatever its shape, as a tampered one.
	buyerDocument: params({ id, signature: { type: "string", minLength: 1, maxLength: 200 } }),
};
