// No product file is over 400 lines (issue 35): a file that grows past it is
// split into files named for what they hold. Product code is the TypeScript
// and JavaScript under services/, shared/, runtime/, bin/ and dev/, as git
// sees it (tracked, or new and not ignored); generated files (marked
// `@generated` or "DO NOT EDIT" at their top) are not written by hand and are
// not counted.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(__dirname, "../..");
const MAX_LINES = 400;
const PRODUCT = ["services", "shared", "runtime", "bin", "dev"];

const productFiles = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "--", ...PRODUCT], {
	cwd: ROOT,
	encoding: "utf8",
})
	.split("\n")
	.filter(file => /\.(ts|js|mjs|cjs)$/.test(file) && existsSync(path.join(ROOT, file)));

/** A file's lines, as an editor numbers them (a last line's newline does not start another). */
const lineCount = (text: string) => (text === "" ? 0 : text.replace(/\n$/, "").split("\n").length);

const generated = (text: string) => /@generated|DO NOT EDIT/i.test(text.split("\n").slice(0, 5).join("\n"));

/** The files over the limit, `file: lines`. */
function oversized(files: { file: string; text: string }[]): string[] {
	return files
		.filter(({ text }) => !generated(text) && lineCount(text) > MAX_LINES)
		.map(({ file, text }) => `${file}: ${lineCount(text)} lines`);
}

describe("Product files' sizes", () => {
	test(`When a product file (services/, shared/, runtime/, bin/, dev/) is read, then it has at most ${MAX_LINES} lines`, () => {
		const files = productFiles.map(file => ({ file, text: readFileSync(path.join(ROOT, file), "utf8") }));

		expect(files.length).toBeGreaterThan(100);
		expect(oversized(files)).toEqual([]);
	});

	test("The size check itself lists a file over the limit, and not one at it or a generated one", () => {
		const lines = (n: number) => "x;\n".repeat(n);

		expect(
			oversized([
				{ file: "services/a/long.ts", text: lines(MAX_LINES + 1) },
				{ file: "services/a/full.ts", text: lines(MAX_LINES) },
				{ file: "dev/made.js", text: `// @generated\n${lines(MAX_LINES * 2)}` },
			]),
		).toEqual([`services/a/long.ts: ${MAX_LINES + 1} lines`]);
		expect(productFiles).toContain("services/billing/billing.service.ts");
		expect(productFiles).toContain("bin/start.ts");
	});
});
