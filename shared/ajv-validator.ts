// Ajv (JSON Schema) as the broker's parameter validator, replacing
// fastest-validator. Values are judged by their JSON type and never coerced:
// the gateway reads path and query text into the declared types itself
// (services/gateway/request-params.ts), so `null`, `true` or `123` sent for a
// string is refused instead of becoming "null", 1 or "123". Unknown
// properties are refused by the schemas themselves (additionalProperties: false).
import Ajv, { type ErrorObject, type SchemaObject } from "ajv";
import addErrors from "ajv-errors";
import addFormats from "ajv-formats";
import { Errors, Validators } from "moleculer";
import type BaseValidator from "moleculer/src/validators/base";

export function createAjv(): Ajv {
	const ajv = new Ajv({ allErrors: true, coerceTypes: false, useDefaults: true, strict: true });
	addFormats(ajv);
	// `errorMessage` in a schema gives a union one sentence instead of one per branch.
	addErrors(ajv);
	return ajv;
}

export interface ParamError {
	type: string;
	field: string;
	message: string;
}

/** One readable sentence per Ajv error, naming the field. */
export function describeAjvErrors(errors: ErrorObject[] | null | undefined): ParamError[] {
	return (errors ?? []).map(e => {
		let field = e.instancePath.replace(/^\//, "").replace(/\//g, ".");
		if (e.keyword === "required") field = [field, e.params.missingProperty].filter(Boolean).join(".");
		if (e.keyword === "additionalProperties") field = [field, e.params.additionalProperty].filter(Boolean).join(".");
		const message =
			e.keyword === "required" ? "is required" : e.keyword === "additionalProperties" ? "is not allowed" : (e.message ?? "is invalid");
		return { type: e.keyword, field: field || "(body)", message: `${field || "request"} ${message}` };
	});
}

/** Our schemas are JSON Schema objects; Moleculer's own internal actions ($node.*) use fastest-validator's format. */
function isJsonSchema(schema: SchemaObject): boolean {
	return schema.type === "object" && typeof schema.properties === "object";
}

export class AjvValidator extends Validators.Base {
	private readonly ajv = createAjv();
	private readonly internal = new Validators.Fastest();

	// Moleculer's middleware reads a checker's result as `true` or a list of
	// errors, though its typings say boolean.
	override compile(schema: SchemaObject): BaseValidator.CheckerFunction {
		if (!isJsonSchema(schema)) return this.internal.compile(schema);
		const validate = this.ajv.compile(schema);
		const check = (params: object) => (validate(params) ? true : describeAjvErrors(validate.errors));
		return check as unknown as BaseValidator.CheckerFunction;
	}

	override validate(params: object, schema: SchemaObject): boolean {
		if (!isJsonSchema(schema)) return this.internal.validate(params, schema);
		const validate = this.ajv.compile(schema);
		if (validate(params)) return true;
		throw new Errors.ValidationError("Parameters validation error!", "VALIDATION_ERROR", describeAjvErrors(validate.errors) as never);
	}

	override convertSchemaToMoleculer(): Record<string, never> {
		return {};
	}
}
