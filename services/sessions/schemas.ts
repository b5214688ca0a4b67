import { id, params } from "../../shared/schemas";

export const schemas = {
	// Any domain value reaches the domain logic, which answers the spec's 500 for a bad one.
	create: params({ accountId: id, domain: {} }, ["accountId"]),
	get: params({ accountId: id, sessionId: { type: "string", format: "uuid" } }),
};
