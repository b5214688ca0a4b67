// Everything the project refers to is in the repository (issue 22): no file
// names a path outside it, so a fresh clone has what each one points to, and
// every relative link of the documentation opens a file of the clone. Every
// repository path the documentation (Markdown) or a code comment names exists
// (issue 35), and every `<file>:<function>` the documentation names is defined there.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import packageJson from "../../package.json";

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

/** The repository's files and their folders, each folder with a trailing slash. */
const entries = new Set(
	files.flatMap(file => [
		file,
		...file
			.split("/")
			.slice(0, -1)
			.map((_, i, parts) => `${parts.slice(0, i + 1).join("/")}/`),
	]),
);
/** Top-level names: a path that starts with one is named from the root. */
const topLevel = new Set([...entries].map(entry => entry.split("/")[0]));

/** Names that look like files and are not the repository's, and why. */
const NOT_FILES: Record<string, string> = {
	"payment-service-interface.md": "the specification the API implements: the client's document, not shipped with the code",
	"additionalData.ts": "a field's path in an error message (the key `ts` of additionalData)",
	"checkout.mjs": "the file a reader saves docs/api.md's example as",
	"secrets.json": "written into DATA_DIR by npm start (dev/local-secrets.ts)",
	"fixtures3.json": "stripe-mock's fixtures, beside the build npm install makes in .stripe-mock/",
	"Node.js": "the runtime's name",
	"Chart.js": "the charting library's name (the dependency chart.js)",
	"stripe.js": "Stripe's browser library, by its name",
	...Object.fromEntries(
		Object.keys({ ...packageJson.dependencies, ...packageJson.devDependencies }).map(name => [name, "a dependency's name"]),
	),
};

/** The folders and files .gitignore names (`data/`, `.stripe-mock/`, `bench/results/`): made by an install, a run or a test. */
const IGNORED = readFileSync(path.join(ROOT, ".gitignore"), "utf8")
	.split("\n")
	.map(line => line.trim())
	.filter(line => line && !line.startsWith("#") && !line.includes("*"));

function isIgnored(fromRoot: string): boolean {
	return IGNORED.some(entry => (entry.endsWith("/") ? `${fromRoot}/`.startsWith(entry) : fromRoot === entry));
}

/**
 * A path as the project names it: from the root (`services/billing/models.ts`), from the naming file's folder
 * (one starting with ./ or ../), or from a folder of its own (`outbox/outbox.ts`, `routes.ts`).
 */
function exists(file: string, ref: string): boolean {
	if (NOT_FILES[ref]) return true;
	const fromRoot = /^\.\.?\//.test(ref) ? path.relative(ROOT, path.resolve(ROOT, path.dirname(file), ref)) : ref.replace(/\/$/, "");
	if (isIgnored(fromRoot)) return true;
	if (topLevel.has(fromRoot.split("/")[0]) || ref.startsWith(".")) return entries.has(fromRoot) || entries.has(`${fromRoot}/`);
	return [...entries].some(entry => entry === fromRoot || entry.endsWith(`/${fromRoot}`) || entry.endsWith(`/${fromRoot}/`));
}

const EXTENSIONS = "ts|js|mjs|cjs|json|md|java|ya?ml|sh|html|css|txt|patch";
/** A path: folders and a file name with a known extension, or folders from the root ending in a slash. */
const PATH = new RegExp(
	`(?<![\\w.@+/<>{}*-])((?:[\\w.@+-]+/)*[\\w@+-][\\w.@+-]*\\.(?:${EXTENSIONS})|(?:[\\w.@+-]+/)+)(?![\\w/<>{}*(-])`,
	"g",
);
/** A placeholder folder: `DATA_DIR/…`, `services/A/`. */
const PLACEHOLDER = /(^|\/)[A-Z][A-Z0-9_]*\//;
/** Where a path may be named without being one of ours: web addresses, dependencies' folders, the system's files. */
const NOT_OURS = /^(node_modules|\.venv[\w-]*|dist)\//;

/** The comments of a TypeScript or JavaScript file. */
function commentsOf(text: string): string {
	return [...text.matchAll(/\/\*[\s\S]*?\*\/|(?<![:"'`\\])\/\/.*$/gm)].map(([comment]) => comment).join("\n");
}

/** The repository paths a Markdown file, or a code file's comments, name. */
function namedPaths(file: string): string[] {
	const text = textOf(file);
	if (text === null) return [];
	const prose = /\.md$/.test(file) ? text : /\.(ts|js|mjs|cjs)$/.test(file) ? commentsOf(text) : null;
	if (prose === null) return [];
	const withoutAddresses = prose.replace(/\b[a-z][\w+.-]*:\/\/\S+/gi, " ").replace(/\]\([^)]*\)/g, "]");
	return [...withoutAddresses.matchAll(PATH)]
		.map(([ref]) => ref)
		.filter(ref => !NOT_OURS.test(ref) && !PLACEHOLDER.test(ref))
		.filter(ref => ref.includes(".") || topLevel.has(ref.split("/")[0]));
}

/** `<file>:<name>` in the documentation: a function (or method, or constant) the file defines. */
const FILE_FUNCTION = /`((?:[\w.-]+\/)*[\w.-]+\.(?:ts|js)):([A-Za-z_$][\w$]*)`/g;

function defines(ref: string, name: string): boolean {
	const file = files.find(f => f === ref) ?? files.find(f => f.endsWith(`/${ref}`));
	const text = file ? textOf(file) : null;
	if (!text) return false;
	return new RegExp(
		`(function\\*?\\s+${name}\\b|(const|let|class)\\s+${name}\\b|^\\s*(async\\s+)?${name}\\s*[(:]|^\\s*"?${name}"?\\s*[(:])`,
		"m",
	).test(text);
}

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

	test("When the documentation or a code comment names a path of the repository, then the repository has it", () => {
		const missing = files
			.flatMap(file => namedPaths(file).map(ref => ({ file, ref })))
			.filter(({ file, ref }) => !exists(file, ref))
			.map(({ file, ref }) => `${file}: ${ref}`);

		expect(missing).toEqual([]);
	});

	test("When the documentation names a file's function (`<file>:<function>`), then the file defines it", () => {
		const undefinedNames = files
			.filter(file => file.endsWith(".md"))
			.flatMap(file => [...(textOf(file) ?? "").matchAll(FILE_FUNCTION)].map(([, ref, name]) => ({ file, ref, name })))
			.filter(({ ref, name }) => !defines(ref, name))
			.map(({ file, ref, name }) => `${file}: ${ref}:${name}`);

		expect(undefinedNames).toEqual([]);
	});
});
