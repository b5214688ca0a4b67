// Everything the project refers to is in the repository (issue 22): no file
// names a path outside it, so a fresh clone has what each one points to, and
// every relative link of the documentation opens a file of the clone.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(__dirname, "../..");

/** Files that name a path outside the repository on purpose, and why. */
const ON_PURPOSE: Record<string, string> = {
	"test/resilience/support/fuzz-requests.ts": "path traversal payloads the fuzzer sends to the gateway, not files it reads",
};

/** The project's files: tracked, and new ones not ignored. */
const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, encoding: "utf8" })
	.split("\n")
	.filter(file => file && existsSync(path.join(ROOT, file)));

/** A file's text, or null for a binary one. */
function textOf(file: string): string | null {
	const bytes = readFileSync(path.join(ROOT, file));
	return bytes.includes(0) ? null : bytes.toString("utf8");
}

const outsideRoot = (target: string) => path.relative(ROOT, target).startsWith("..");

describe("Paths the project's files name", () => {
	test("When a file names a path up its folders (../), then the path stays inside the repository", () => {
		const outside = files
			.filter(file => !ON_PURPOSE[file])
			.flatMap(file =>
				[...(textOf(file) ?? "").matchAll(/(?:\.\.\/)+[\w.@-]*/g)]
					.filter(([ref]) => outsideRoot(path.resolve(ROOT, path.dirname(file), ref)))
					.map(([ref]) => `${file}: ${ref}`),
			);

		expect(outside).toEqual([]);
	});

	test("When a file names a path in a home folder, then none is found: it would be one machine's", () => {
		const personal = files.flatMap(file =>
			[...(textOf(file) ?? "").matchAll(/(?<![\w.])(?:\/home|\/Users)\/[\w.-]+/g)].map(([ref]) => `${file}: ${ref}`),
		);

		expect(personal).toEqual([]);
	});

	test("When the documentation links to a file, then the repository has it", () => {
		const missing = files
			.filter(file => file.endsWith(".md"))
			.flatMap(file =>
				[...(textOf(file) ?? "").matchAll(/\]\(([^)\s]+)\)/g)]
					.map(([, link]) => link)
					.filter(link => !/^([a-z]+:|#)/i.test(link))
					.filter(link => {
						const target = path.resolve(ROOT, path.dirname(file), link.split("#")[0]);
						return outsideRoot(target) || !existsSync(target);
					})
					.map(link => `${file}: ${link}`),
			);

		expect(missing).toEqual([]);
	});
});
