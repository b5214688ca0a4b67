// docs/architecture.md's tables of calls and events between services are read
// against the code, so they cannot drift: each service's row names exactly the
// other services' actions its code calls, and the events table names exactly
// the events the code emits. The gateway's row also says "the action of each
// route", so the actions its route tables name (endpoints.ts) need no mention.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(__dirname, "../..");
const SERVICES = readdirSync(path.join(ROOT, "services")).filter(name => statSync(path.join(ROOT, "services", name)).isDirectory());
const ACTION_NAME = new RegExp(`\\b(${SERVICES.join("|")})\\.([a-zA-Z]+)\\b`, "g");

function sourceFiles(dir: string): string[] {
	return readdirSync(dir).flatMap(name => {
		const full = path.join(dir, name);
		return statSync(full).isDirectory() ? sourceFiles(full) : full.endsWith(".ts") ? [full] : [];
	});
}

/** The code without its comments: a comment may name an action it does not call. */
function codeOf(file: string): string {
	return readFileSync(file, "utf8")
		.replace(/\/\*[\s\S]*?\*\//g, "")
		.replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

/** `service.action` names in quotes, in the given files' code. */
function quotedNames(files: string[]): Set<string> {
	const names = files.flatMap(file => [...codeOf(file).matchAll(/["'`]([a-z]+\.[a-zA-Z]+)["'`]/g)].map(m => m[1]));
	return new Set(names.filter(name => SERVICES.includes(name.split(".")[0])));
}

/** The rows of the markdown table that follows `heading`'s first line starting with `| first column |`. */
function tableRows(doc: string, header: string): string[][] {
	const lines = doc.split("\n");
	const start = lines.findIndex(line => line.startsWith(header));
	if (start < 0) throw new Error(`docs/architecture.md has no table headed "${header}"`);
	const rows: string[][] = [];
	for (const line of lines.slice(start + 2)) {
		if (!line.startsWith("|")) break;
		rows.push(line.split("|").slice(1, -1));
	}
	return rows;
}

const namesIn = (text: string) => [...text.matchAll(ACTION_NAME)].map(m => m[0]).filter(name => !/\.(ts|md)$/.test(name));

const doc = readFileSync(path.join(ROOT, "docs/architecture.md"), "utf8");
const eventRows = tableRows(doc, "| event |");
const documentedEvents = new Set(eventRows.map(([event]) => event.trim().replace(/`/g, "")));
const documentedCalls = new Map(tableRows(doc, "| caller |").map(([caller, calls]) => [caller.trim().replace(/`/g, ""), calls]));

function calledBy(service: string): string[] {
	const files = sourceFiles(path.join(ROOT, "services", service));
	const names = quotedNames(files);
	const routes = service === "gateway" ? quotedNames([path.join(ROOT, "services/gateway/endpoints.ts")]) : new Set<string>();
	return [...names].filter(name => !name.startsWith(`${service}.`) && !documentedEvents.has(name) && !routes.has(name)).sort();
}

describe("docs/architecture.md against the code", () => {
	test.each(SERVICES)(
		"When %s's code calls another service's action, then its row of the calls table names it, and names nothing else",
		service => {
			const documented = documentedCalls.get(service) ?? "";
			const called = calledBy(service);
			const listed = [...new Set(namesIn(documented))]
				.filter(name => !name.startsWith(`${service}.`) && !documentedEvents.has(name))
				.sort();
			const gatewayRoutes = service === "gateway" ? quotedNames([path.join(ROOT, "services/gateway/endpoints.ts")]) : new Set();

			expect({ missing: called.filter(name => !listed.includes(name)) }).toEqual({ missing: [] });
			expect({ neverCalled: listed.filter(name => !called.includes(name) && !gatewayRoutes.has(name)) }).toEqual({ neverCalled: [] });
		},
	);

	test("When the code emits or broadcasts an event, then the events table names it, and names no event the code never sends", () => {
		const files = ["services", "shared", "runtime"].flatMap(dir => sourceFiles(path.join(ROOT, dir)));
		const sent = new Set(
			files.flatMap(file =>
				[...codeOf(file).matchAll(/\b(?:emit|broadcast|broadcastLocal)\(\s*(?:\w+(?:\.\w+)?,\s*)?["'`]([\w.]+)["'`]/g)].map(m => m[1]),
			),
		);

		expect([...sent].filter(event => !documentedEvents.has(event)).sort()).toEqual([]);
		expect([...documentedEvents].filter(event => !sent.has(event)).sort()).toEqual([]);
	});
});
