// Summarizes V8 CPU profiles (.cpuprofile, as `node --cpu-prof` writes them,
// e.g. from `npm run bench -- --profile`): where the time went, by function
// and by package or project folder, as self time (the function's own code).
//
//   npx tsx bench/profile-summary.ts bench/results/profiles/*.cpuprofile [--top 25]
import { readFileSync } from "node:fs";
import path from "node:path";

interface ProfileNode {
	id: number;
	callFrame: { functionName: string; url: string; lineNumber: number };
	hitCount?: number;
	children?: number[];
}

interface Profile {
	nodes: ProfileNode[];
	startTime: number;
	endTime: number;
	samples: number[];
	timeDeltas: number[];
}

/** `node_modules/mongoose/…` -> "mongoose"; project files by folder; Node's own code as "node:". */
function owner(url: string): string {
	if (!url) return "(V8 / native)";
	if (url.startsWith("node:")) return "node: (core)";
	const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
	if (modules) return modules[1];
	const file = url.replace(/^file:\/\//, "");
	const relative = path.relative(process.cwd(), file);
	return relative.startsWith("..") ? file : path.dirname(relative);
}

export function summarize(file: string, top: number): string {
	const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
	const byId = new Map(profile.nodes.map(n => [n.id, n]));
	const self = new Map<number, number>();
	// Each sample's time is the delta to the next one.
	for (const [i, id] of profile.samples.entries()) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
	const total = [...self.values()].reduce((a, b) => a + b, 0);
	const byFunction = new Map<string, number>();
	const byOwner = new Map<string, number>();
	for (const [id, micros] of self) {
		const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
		const name =
			`${functionName || "(anonymous)"} ${url ? `${url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*?\/main\//, "")}:${lineNumber + 1}` : ""}`.trim();
		byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
		const who = ["(idle)", "(program)", "(garbage collector)"].includes(functionName) ? functionName : owner(url);
		byOwner.set(who, (byOwner.get(who) ?? 0) + micros);
	}
	// The project's own frame nearest to each sample: which of our functions the library time is spent for.
	const parent = new Map<number, number>();
	for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
	const isProject = (url: string) => url.startsWith("file://") && !url.includes("/node_modules/");
	const byProjectFrame = new Map<string, number>();
	for (const [id, micros] of self) {
		let at: number | undefined = id;
		while (at !== undefined && !isProject(byId.get(at)!.callFrame.url)) at = parent.get(at);
		if (at === undefined) continue;
		const { functionName, url, lineNumber } = byId.get(at)!.callFrame;
		const name = `${functionName || "(anonymous)"} ${path.relative(process.cwd(), url.replace(/^file:\/\//, ""))}:${lineNumber + 1}`;
		byProjectFrame.set(name, (byProjectFrame.get(name) ?? 0) + micros);
	}
	const busy = total - (byOwner.get("(idle)") ?? 0);
	const line = (name: string, micros: number) =>
		`${((micros / busy) * 100).toFixed(1).padStart(5)} %  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${name}`;
	const sorted = (m: Map<string, number>) =>
		[...m.entries()]
			.filter(([name]) => name !== "(idle)" && !name.startsWith("(idle)"))
			.sort((a, b) => b[1] - a[1])
			.slice(0, top);
	return [
		`${path.basename(file)}: ${(total / 1e6).toFixed(1)} s profiled, ${(busy / 1e6).toFixed(1)} s busy (${((busy / total) * 100).toFixed(0)} %); shares of busy time`,
		"  by package / folder:",
		...sorted(byOwner).map(([name, micros]) => `    ${line(name, micros)}`),
		"  by function (self time):",
		...sorted(byFunction).map(([name, micros]) => `    ${line(name, micros)}`),
		"  by the nearest project function on the stack (its own time and the libraries' time it caused):",
		...sorted(byProjectFrame).map(([name, micros]) => `    ${line(name, micros)}`),
	].join("\n");
}

if (require.main === module) {
	const args = process.argv.slice(2);
	const topAt = args.indexOf("--top");
	const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 25;
	if (args.length === 0) {
		console.error("usage: npx tsx bench/profile-summary.ts <file.cpuprofile>… [--top N]");
		process.exit(2);
	}
	for (const file of args) console.log(`${summarize(file, top)}\n`);
}
