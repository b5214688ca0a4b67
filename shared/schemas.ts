// JSON Schema fragments shared by the services' action schemas.
export const id = { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as const;
export const shortText = { type: "string", minLength: 1, maxLength: 200 } as const;

/**
 * An object schema that refuses unknown properties. Its fragments are copied:
 * Moleculer drops an object it has already seen when it sends a node's actions
 * to the others, so a fragment used twice (`{accountId: id, id}`) would reach the
 * gateway without its second property, and the gateway reads path and query
 * values by these types.
 */
export function params(properties: Record<string, object>, required: string[] = Object.keys(properties)) {
	return {
		type: "object",
		properties: JSON.parse(JSON.stringify(properties)) as Record<string, object>,
		required,
		additionalProperties: false,
	} as const;
}
