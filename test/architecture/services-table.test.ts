// What README.md and docs/architecture.md say of the services is read against
// the code (issue 35), so it cannot drift: the number of services they state
// is the number the runtime starts (runtime/services.ts), and each service's
// collections in architecture.md's table are exactly those of the mongoose
// models it registers: the models its dbMixin's factory (services/<name>/models.ts)
// builds on its connection, shared ones (sequences, timelines) included.
import { readFileSync } from "node:fs";
import path from "node:path";
import mongoose from "mongoose";
import { serviceSchemas } from "../../runtime/services";

const ROOT = path.resolve(__dirname, "../..");
const SERVICES = Object.keys(serviceSchemas);
const NUMBERS = [
	"zero",
	"one",
	"two",
	"three",
	"four",
	"five",
	"six",
	"seven",
	"eight",
	"nine",
	"ten",
	"eleven",
	"twelve",
	"thirteen",
	"fourteen",
	"fifteen",
];

const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

/** The numbers a document states in "<number> [Moleculer](…) services", as numbers. */
function statedCounts(doc: string): number[] {
	return [...doc.matchAll(/\b([A-Za-z]+|\d+) \[Moleculer\]\([^)]*\) services\b/g)].map(([, word]) =>
		/^\d+$/.test(word) ? Number(word) : NUMBERS.indexOf(word.toLowerCase()),
	);
}

/** architecture.md's services table: each service's collections, as the table names them. */
function documentedCollections(): Map<string, string[]> {
	const lines = read("docs/architecture.md").split("\n");
	const start = lines.findIndex(line => line.startsWith("| service | collections |"));
	if (start < 0) throw new Error('docs/architecture.md has no table headed "| service | collections |"');
	const rows = new Map<string, string[]>();
	for (const line of lines.slice(start + 2)) {
		if (!line.startsWith("|")) break;
		const [service, collections] = line.split("|").slice(1, 3);
		rows.set(
			service.trim().replace(/`/g, ""),
			[...collections.matchAll(/`([a-z_]+)`/g)].map(([, name]) => name),
		);
	}
	return rows;
}

/** The collections of the models a service registers: its dbMixin's factory, run on a connection that never connects. */
function registeredCollections(service: string): string[] {
	const serviceFile = path.join(ROOT, "services", service, `${service}.service.ts`);
	const source = readFileSync(serviceFile, "utf8");
	const mixin = /dbMixin\(\s*"([^"]+)"\s*,\s*(\w+)\s*\)/.exec(source);
	if (!mixin) return [];
	const [, database, factory] = mixin;
	if (database !== service) throw new Error(`${service}.service.ts opens the database of "${database}"`);
	const from = new RegExp(`import\\s*{[^}]*\\b${factory}\\b[^}]*}\\s*from\\s*"([^"]+)"`).exec(source);
	if (!from) throw new Error(`${service}.service.ts does not import ${factory}`);
	const create = require(path.resolve(path.dirname(serviceFile), from[1]))[factory] as (connection: mongoose.Connection) => unknown;
	const instance = new mongoose.Mongoose();
	instance.set("autoIndex", false);
	instance.set("autoCreate", false);
	const connection = instance.createConnection();
	create(connection);
	return Object.values(connection.models).map(model => model.collection.collectionName);
}

describe("The services as the documentation states them", () => {
	test.each(["README.md", "docs/architecture.md"])(
		"When %s states how many services there are, then it is as many as the runtime starts",
		file => {
			const counts = statedCounts(read(file));

			expect(counts.length).toBeGreaterThan(0);
			expect(counts).toEqual(counts.map(() => SERVICES.length));
		},
	);

	test("When architecture.md's services table lists the services, then it lists each service the runtime starts, once", () => {
		expect([...documentedCollections().keys()].sort()).toEqual([...SERVICES].sort());
	});

	test.each(SERVICES)("When architecture.md lists the collections of %s, then they are those of the models it registers", service => {
		const documented = documentedCollections().get(service) ?? [];

		expect([...documented].sort()).toEqual(registeredCollections(service).sort());
	});
});
