// The JSON Schemas of the dashboard service's actions' parameters (Ajv; nothing is coerced).
import { listParams } from "../../shared/list-page";
import { id, params } from "../../shared/schemas";

const email = { type: "string", minLength: 3, maxLength: 254, pattern: "^[^\\s@]+@[^\\s@]+$" };
/** Long enough to resist guessing; scrypt takes any length, the cap keeps hashing cheap to refuse. */
const password = { type: "string", minLength: 12, maxLength: 200 };
const role = { enum: ["viewer", "operator"] };

export const schemas = {
	createUser: params({ accountId: id, email, role, password }, ["accountId", "email", "role"]),
	listUsers: params({ accountId: id }),
	updateUser: params({ accountId: id, userId: id, disabled: { type: "boolean" }, role, password }, ["accountId", "userId"]),
	signIn: params({ email: { type: "string", minLength: 1, maxLength: 254 }, password: { type: "string", minLength: 1, maxLength: 200 } }),
	token: params({ token: { type: "string", pattern: "^[A-Za-z0-9_-]{43}$" } }),
	recordAudit: params({
		accountId: id,
		userId: id,
		email: { type: "string", maxLength: 254 },
		action: { type: "string", maxLength: 100 },
		target: { type: ["string", "null"], maxLength: 200 },
		outcome: { type: "string", maxLength: 500 },
		from: { type: "string", maxLength: 100 },
	}),
	listAudit: params({ accountId: id, ...listParams }, ["accountId"]),
};
