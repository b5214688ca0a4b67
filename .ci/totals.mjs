// Totals every suite .ci/run ran, as one plain line: "N passed, M failed, K skipped".
// Usage: node .ci/totals.mjs <results dir> <failed stage>...
// Jest writes <stage>.json (--json), Schemathesis contract.xml (JUnit); a stage that
// failed without writing its results (lint, typecheck, a crash) counts as one failure.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

const [dir, ...failedStages] = process.argv.slice(2);
const totals = { passed: 0, failed: 0, skipped: 0 };
const counted = new Set();

for (const stage of ["unit", "resilience"]) {
	const file = path.join(dir, `${stage}.json`);
	if (!existsSync(file)) continue;
	const jest = JSON.parse(readFileSync(file, "utf8"));
	totals.passed += jest.numPassedTests;
	// A suite that failed to run (a syntax error, a hook that threw) has no failed test of its own.
	totals.failed += jest.numFailedTests + jest.numRuntimeErrorTestSuites;
	totals.skipped += jest.numPendingTests + jest.numTodoTests;
	counted.add(stage);
}

const junit = path.join(dir, "contract.xml");
if (existsSync(junit)) {
	const xml = readFileSync(junit, "utf8");
	const cases = xml.match(/<testcase\b[\s\S]*?(?:\/>|<\/testcase>)/g) ?? [];
	const failing = cases.filter(c => /<(failure|error)\b/.test(c)).length;
	const skipped = cases.filter(c => /<skipped\b/.test(c)).length;
	totals.failed += failing;
	totals.skipped += skipped;
	totals.passed += cases.length - failing - skipped;
	counted.add("contract");
}

// The benchmark's smoke run is one check: it completed or not.
if (!failedStages.includes("bench")) totals.passed += 1;

for (const stage of failedStages) if (!counted.has(stage)) totals.failed += 1;

console.log(`${totals.passed} passed, ${totals.failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ""}`);
