// JSON Schema fragments shared by the services' action schemas.
export const id = { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as const;
export const shortText = { type: "string", minLength: 1, maxLength: 200 } as const;

/** An object schema that refuses unknown properties. */
export function params(properties: Record<string, object>, required: string[] = Object.keys(properties)) {
	return { type: "object", properties, required, additionalProperties: false } as const;
}
