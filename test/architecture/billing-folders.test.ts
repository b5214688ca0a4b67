// Billing's folders import each other one way only (issue 35): the graph of
// imports between its sub-folders (services/billing/<folder>/, and a folder
// inside one, such as changes/rules/, as a folder of its own), read from the
// import statements of their files (type imports included), has no cycle. The
// top-level files (models, states, lifecycle, deps, the subscription lock, the
// renewal lease...) may be imported by any folder; machinery two folders both
// need lives there, not in one of them.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(__dirname, "../..");
const BILLING = path.join(ROOT, "services", "billing");

function sourceFiles(dir: string): string[] {
	return readdirSync(dir).flatMap(name => {
		const full = path.join(dir, name);
		return statSync(full).isDirectory() ? sourceFiles(full) : /\.(ts|js)$/.test(full) ? [full] : [];
	});
}

/** The sub-folder of billing a file or import target is in (`changes/rules`); undefined for a top-level file or one outside billing. */
function folderOf(target: string): string | undefined {
	const parts = path.relative(BILLING, target).split(path.sep);
	return parts[0] === ".." || parts.length < 2 ? undefined : parts.slice(0, -1).join("/");
}

/** Each folder's imports of other folders: folder -> folder -> the `file -> import` lines that make the edge. */
type FolderGraph = Map<string, Map<string, string[]>>;

function folderGraph(): FolderGraph {
	const graph: FolderGraph = new Map();
	for (const file of sourceFiles(BILLING)) {
		const from = folderOf(file);
		if (!from) continue;
		const text = readFileSync(file, "utf8");
		const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|require\s*\(\s*)["'](\.[^"']*)["']/g)].map(m => m[1]);
		for (const specifier of specifiers) {
			const to = folderOf(path.resolve(path.dirname(file), specifier));
			if (!to || to === from) continue;
			const edges = graph.get(from) ?? new Map<string, string[]>();
			graph.set(from, edges);
			edges.set(to, [...(edges.get(to) ?? []), `${path.relative(ROOT, file)} -> ${specifier}`]);
		}
	}
	return graph;
}

/** Every elementary cycle of the graph, each once, starting at its smallest folder: `a -> b -> a`. */
function cyclesOf(graph: FolderGraph): string[][] {
	const cycles: string[][] = [];
	const folders = [...graph.keys()].sort();
	for (const start of folders) {
		// Only cycles whose smallest folder is `start`, so each is found once.
		const walk = (at: string, trail: string[]) => {
			for (const next of [...(graph.get(at)?.keys() ?? [])].sort()) {
				if (next === start) cycles.push([...trail, start]);
				else if (next > start && !trail.includes(next)) walk(next, [...trail, next]);
			}
		};
		walk(start, [start]);
	}
	return cycles;
}

/** A cycle as its folders and, for each step, the imports that make it. */
function described(graph: FolderGraph, cycle: string[]): string {
	const steps = cycle.slice(1).map((to, i) => `  ${cycle[i]} -> ${to}: ${graph.get(cycle[i])?.get(to)?.join(", ")}`);
	return [cycle.join(" -> "), ...steps].join("\n");
}

describe("Billing's folders", () => {
	test("When billing's sub-folders import each other, then no import cycle runs between them", () => {
		const graph = folderGraph();

		expect(graph.size).toBeGreaterThan(3);
		expect(cyclesOf(graph).map(cycle => described(graph, cycle))).toEqual([]);
	});

	test("The cycle check itself finds a cycle between folders, direct or through a third, and none in a one-way graph", () => {
		const edge = (pairs: [string, string][]): FolderGraph => {
			const graph: FolderGraph = new Map();
			for (const [from, to] of pairs) graph.set(from, new Map([...(graph.get(from) ?? []), [to, [`${from}/x.ts -> ../${to}/y`]]]));
			return graph;
		};

		expect(
			cyclesOf(
				edge([
					["renewals", "subscriptions"],
					["subscriptions", "renewals"],
				]),
			),
		).toEqual([["renewals", "subscriptions", "renewals"]]);
		expect(
			cyclesOf(
				edge([
					["a", "b"],
					["b", "c"],
					["c", "a"],
					["c", "d"],
				]),
			),
		).toEqual([["a", "b", "c", "a"]]);
		expect(
			cyclesOf(
				edge([
					["a", "b"],
					["b", "c"],
					["a", "c"],
				]),
			),
		).toEqual([]);
		expect(folderOf(path.join(BILLING, "models.ts"))).toBeUndefined();
		expect(folderOf(path.join(BILLING, "renewals", "renewal-batch.ts"))).toBe("renewals");
		expect(folderOf(path.join(BILLING, "changes", "rules", "proration.ts"))).toBe("changes/rules");
	});
});
