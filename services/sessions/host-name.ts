// A session is bound to a bare host name (`shop.example.com`): letters,
// digits and hyphens in dot-separated labels; no scheme, port, path or spaces.
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

export function normalizeHostName(value: unknown): string | null {
	if (typeof value !== "string" || value.length === 0 || value.length > 253) return null;
	const host = value.toLowerCase();
	return host.split(".").every(label => LABEL.test(label)) ? host : null;
}
