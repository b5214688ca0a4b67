// docs/architecture.md's tables of calls and events between services are read
// against the code, so they cannot drift: each service's row names exactly the
// other services' actions its code calls, and the events table names exactly
// the events the code emits. The gateway's row also says "the action of each
// route", so the actions its route tables name (endpoints.ts) need no mention.
//
// A call is found by its name wherever the code holds it, not by the shape of
// the call: every string literal `<service>.<action>` of a known service's
// known action (the actions its schema and mixins declare) counts, in a
// call(...), in a constant, as a helper's argument or in a union type, and a
// template `${…}.<action>` counts as `<service>.<action>`. An event is sent
// where its name (an event of shared/contracts) is a value, not a listener's
// key or a type's.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { ServiceSchema } from "moleculer";
import { serviceSchemas } from "../../runtime/services";

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
function codeOf(text: string): string {
	return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

/** A schema's actions, its mixins' included (dbMixin's `health`). */
function actionsOf(schema: Partial<ServiceSchema>): string[] {
	return [...Object.keys(schema.actions ?? {}), ...((schema.mixins ?? []) as Partial<ServiceSchema>[]).flatMap(actionsOf)];
}

/** Every action a service answers, by its schema: `<service>.<action>`. */
const KNOWN_ACTIONS = new Set(Object.entries(serviceSchemas).flatMap(([service, schema]) => actionsOf(schema).map(a => `${service}.${a}`)));

/** The events the contracts declare: the keys of every `…Events` interface of shared/contracts. */
const KNOWN_EVENTS = new Set(
	sourceFiles(path.join(ROOT, "shared/contracts")).flatMap(file =>
		[...readFileSync(file, "utf8").matchAll(/export interface \w+Events \{([\s\S]*?)\n\}/g)].flatMap(([, body]) =>
			[...body.matchAll(/^\t"([\w.]+)":/gm)].map(m => m[1]),
		),
	),
);

/**
 * The actions a piece of code names: each string literal that is a known `<service>.<action>`, wherever it stands,
 * and each template `${…}.<action>` of an action every service answers, as `<service>.<action>`.
 */
function actionNames(code: string): string[] {
	const literals = [...code.matchAll(/["'`]([a-z]+\.[a-zA-Z]+)["'`]/g)].map(m => m[1]).filter(name => KNOWN_ACTIONS.has(name));
	const everyService = (action: string) => SERVICES.every(service => KNOWN_ACTIONS.has(`${service}.${action}`));
	const templates = [...code.matchAll(/`\$\{[^}`]+\}\.([a-zA-Z]+)`/g)].map(m => m[1]).filter(everyService);
	return [...new Set([...literals, ...templates.map(action => `<service>.${action}`)])].sort();
}

/** The events a piece of code sends: a known event's name as a value (a listener's key or a type's is followed by `(` or `:`). */
function sentEvents(code: string): string[] {
	const values = [...code.matchAll(/["'`]([\w.]+)["'`](?!\s*[(:])/g)].map(m => m[1]);
	return [...new Set(values.filter(name => KNOWN_EVENTS.has(name)))].sort();
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

/** The calls a row names: `service.action`, and `<service>.action` for one every service answers. */
const namesIn = (text: string) => [
	...[...text.matchAll(ACTION_NAME)].map(m => m[0]).filter(name => !/\.(ts|md)$/.test(name)),
	...[...text.matchAll(/<service>\.([a-zA-Z]+)/g)].map(m => m[0]),
];

const doc = readFileSync(path.join(ROOT, "docs/architecture.md"), "utf8");
const eventRows = tableRows(doc, "| event |");
const documentedEvents = new Set(eventRows.map(([event]) => event.trim().replace(/`/g, "")));
const documentedCalls = new Map(tableRows(doc, "| caller |").map(([caller, calls]) => [caller.trim().replace(/`/g, ""), calls]));
const gatewayRoutes = new Set(actionNames(codeOf(readFileSync(path.join(ROOT, "services/gateway/endpoints.ts"), "utf8"))));

function calledBy(service: string): string[] {
	const names = actionNames(
		sourceFiles(path.join(ROOT, "services", service))
			.map(file => codeOf(readFileSync(file, "utf8")))
			.join("\n"),
	);
	return names.filter(name => !name.startsWith(`${service}.`) && !(service === "gateway" && gatewayRoutes.has(name)));
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

			expect({ missing: called.filter(name => !listed.includes(name)) }).toEqual({ missing: [] });
			expect({ neverCalled: listed.filter(name => !called.includes(name) && !(service === "gateway" && gatewayRoutes.has(name))) }).toEqual(
				{
					neverCalled: [],
				},
			);
		},
	);

	test("When the code emits or broadcasts an event, then the events table names it, and names no event the code never sends", () => {
		const files = ["services", "shared", "runtime"]
			.flatMap(dir => sourceFiles(path.join(ROOT, dir)))
			.filter(file => !file.startsWith(path.join(ROOT, "shared/contracts")));
		const sent = new Set(sentEvents(files.map(file => codeOf(readFileSync(file, "utf8"))).join("\n")));

		expect(KNOWN_EVENTS.size).toBeGreaterThan(3);
		expect([...sent].filter(event => !documentedEvents.has(event)).sort()).toEqual([]);
		expect([...documentedEvents].filter(event => !sent.has(event)).sort()).toEqual([]);
	});

	test("The name finder finds a call's name in a constant, a helper's argument, a union type and a template, and nothing else", () => {
		const code = codeOf(`
			const APPLY = "metrics.apply";
			const tell = (action: "billing.clockMoved" | "metrics.clockMoved", nodeID: string) => call(broker, action, {}, { nodeID });
			tell("metrics.clockMoved", node);
			broker.call(\`\${name}.health\`, {});
			logger.info("see payments.ts"); // accounts.get is only named here
			const metric = "billing.recovery.entered";
			const unknown = "billing.noSuchAction";
			const field = "lease.owner";
		`);

		expect(actionNames(code)).toEqual(["<service>.health", "billing.clockMoved", "metrics.apply", "metrics.clockMoved"]);
		expect(sentEvents(`broadcast(ctx, "accounts.updated", {}); const E = "accounts.webhookUrlSet"; emit(ctx, E, {});`)).toEqual([
			"accounts.updated",
			"accounts.webhookUrlSet",
		]);
		expect(sentEvents(`events: { "accounts.updated"() {}, "accounts.tokensRotated": handler }`)).toEqual([]);
	});
});
