// Claims of docs/architecture.md read against the code (issue 46), so they
// cannot drift: every file of the services, shared/ and runtime/ opens with a
// comment saying what it is for; the number of schedules the embedded
// database's rules state is the number the code creates; Billing's map names
// every record schema in services/billing/records/.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(__dirname, "../..");
const NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];

/** The tracked (or new, not ignored) TypeScript files under these folders. */
function filesUnder(...folders: string[]): string[] {
	return execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "--", ...folders], { cwd: ROOT, encoding: "utf8" })
		.split("\n")
		.filter(file => file.endsWith(".ts") && existsSync(path.join(ROOT, file)));
}

const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");
const doc = read("docs/architecture.md");

/** The code without its comments: a comment may name a function it does not call. */
const codeOf = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");

describe("docs/architecture.md's claims against the code", () => {
	test("When a file of services/, shared/ or runtime/ is read, then it opens with a // comment saying what it is for", () => {
		const files = filesUnder("services", "shared", "runtime");

		expect(files.length).toBeGreaterThan(100);
		expect(files.filter(file => !read(file).startsWith("//"))).toEqual([]);
	});

	test("When the embedded database's rules count the schedules, then they count those the code creates (createSchedule)", () => {
		const created = filesUnder("services").flatMap(file => [...codeOf(read(file)).matchAll(/\bcreateSchedule\s*[<(]/g)]);
		const stated = /\| Work due at a time by key \| (\w+) schedules \(`shared\/schedule\.ts`\)/.exec(doc);

		expect(stated).not.toBeNull();
		expect(NUMBERS.indexOf(stated![1].toLowerCase())).toBe(created.length);
	});

	test("When Billing's map lists the records, then it names each file of services/billing/records/", () => {
		const row = doc.split("\n").find(line => line.startsWith("| `models.ts`, `records/`"));
		const files = filesUnder("services/billing/records").map(file => path.basename(file));

		expect(row).toBeDefined();
		expect(files.length).toBeGreaterThan(5);
		expect(files.filter(file => !row!.includes(`\`${file}\``))).toEqual([]);
	});
});
