// Adyen's Checkout API for the tests: Adyen's published OpenAPI document (v71, which `npm install`
// brings into .adyen/, dev/install/adyen-openapi.mjs; ADYEN_OPENAPI_FILE names another copy) served
// by Prism (@stoplight/prism-cli, a devDependency) on a free port, as the NATS server and stripe-mock
// are (dev/processes.ts, dev/stripe-servers.ts). With --errors it checks every request against the
// document: an invalid one answers the document's 422 (a wrong or missing X-API-Key its 401), and
// its log names the fault (prismViolations). A valid one answers the operation's first example, or
// the one a `Prefer: example=<name>` header names; Prism keeps no state.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { projectRoot } from "../shared/paths";
import { freePort, waitForPort } from "./net";
import { projectBinary } from "./project-binary";

const PROJECT_DOCUMENT = path.join(projectRoot, ".adyen", "CheckoutService-v71.json");
const PRISM = path.join(projectRoot, "node_modules", ".bin", "prism");
/** About 1 s on an idle machine, 10 s on a busy one: it loads and dereferences the 500 kB document first. */
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 5_000;
/** The output kept for log(): Prism writes several lines for each request. */
const LOG_BYTES = 20_000;

export interface PrismServer {
	url: string;
	/** Stops Prism's whole process group; resolves once it is gone. */
	stop(): Promise<void>;
	/** Prism's last output (about 20 kB): each request, how it was answered, and each violation (see prismViolations). */
	log(): string;
}

/** The Checkout API document to serve; throws how to get one when there is none. */
export function adyenOpenApiDocument(env: NodeJS.ProcessEnv = process.env): string {
	return projectBinary(env, {
		envVar: "ADYEN_OPENAPI_FILE",
		file: PROJECT_DOCUMENT,
		missing:
			"No Adyen Checkout API document in .adyen/: `npm install` fetches it from the npm registry. " +
			"Re-run npm install and read its [adyen-openapi] lines, or set ADYEN_OPENAPI_FILE to a copy of Adyen's CheckoutService-v71.json.",
	});
}

/**
 * What Prism logged as wrong, in order, without colours: each fault of an invalid request (once as the validator found it,
 * once as `Violation: <where> <what>` when it answers), and each request it ended with an error (no route, or an answer
 * that breaks the document). Every such line is logged at the error level: `[VALIDATOR] ✖  error     <what>`. The log
 * reaches us a few ms after Prism's answer: wait for the violation expected (test/dev/adyen-servers.test.ts polls).
 */
export function prismViolations(log: string): string[] {
	const violations: string[] = [];
	for (const line of log.replace(ANSI_CODES, "").split("\n")) {
		const found = /✖\s+error\s+(.*?)\s*$/.exec(line);
		if (found) violations.push(found[1]);
	}
	return violations;
}

/** Colour codes, should a log come from a Prism that wrote them. */
const ANSI_CODES = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

/** Prism serving Adyen's Checkout API (or `document`) on a free port of 127.0.0.1. */
export async function startPrism(options: { document?: string } = {}): Promise<PrismServer> {
	const document = options.document ?? adyenOpenApiDocument();
	if (!existsSync(document)) throw new Error(`No OpenAPI document at ${document}`);
	if (!existsSync(PRISM)) throw new Error(`No ${PRISM}: @stoplight/prism-cli is a devDependency; re-run npm install`);
	const served = servable(document);
	const port = await freePort();
	// The binary itself, not npx (stopping npx would leave Prism running), leading a process group of its own.
	const child = spawn(PRISM, ["mock", "-p", String(port), "-h", "127.0.0.1", "--errors", served.file], {
		detached: true,
		stdio: ["ignore", "pipe", "pipe"],
		env: { ...process.env, FORCE_COLOR: "0" },
	});
	let output = "";
	const keep = (chunk: Buffer) => {
		output = (output + chunk.toString()).slice(-LOG_BYTES);
	};
	child.stdout!.on("data", keep);
	child.stderr!.on("data", keep);
	// Should this process end without stop(), Prism goes with it.
	const orphaned = () => {
		signalGroup(child, "SIGKILL");
		served.remove();
	};
	process.once("exit", orphaned);
	const stop = async () => {
		process.removeListener("exit", orphaned);
		await stopGroup(child);
		served.remove();
	};
	const failed = new Promise<never>((_, reject) =>
		child.once("error", err => reject(new Error(`Cannot start ${PRISM} (${(err as NodeJS.ErrnoException).code}); re-run npm install`))),
	);
	failed.catch(() => undefined); // a later failure shows as the process's exit, not as an unhandled rejection
	try {
		await Promise.race([waitForPort(port, READY_TIMEOUT_MS, () => child.exitCode === null), failed]);
	} catch (err) {
		await stop();
		throw new Error(`Prism did not start on ${document}: ${(err as Error).message}\n${output}`.trim());
	}
	return { url: `http://127.0.0.1:${port}`, stop, log: () => output };
}

/**
 * The document as Prism can serve it with --errors. Adyen's v71 gives its 422 answer (components.examples["generic-422"],
 * the answer of every operation to an invalid request) an `errorCode` of 14030, a number where its ServiceError schema says
 * a string; Prism checks its answers too and would turn each 422 into a 500. A copy with "14030" is served then, removed
 * on stop; a document without that fault is served as it is.
 */
function servable(document: string): { file: string; remove(): void } {
	let spec: { components?: { examples?: Record<string, { value?: { errorCode?: unknown } }> } };
	try {
		spec = JSON.parse(readFileSync(document, "utf8"));
	} catch {
		return { file: document, remove: () => undefined }; // YAML, or broken: Prism reads it, or says why not
	}
	const example = spec.components?.examples?.["generic-422"]?.value;
	if (typeof example?.errorCode !== "number") return { file: document, remove: () => undefined };
	example.errorCode = String(example.errorCode);
	const dir = mkdtempSync(path.join(os.tmpdir(), "adyen-prism-"));
	const file = path.join(dir, path.basename(document));
	writeFileSync(file, JSON.stringify(spec));
	return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Sends a signal to the child's whole process group; false when there is none left. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): boolean {
	try {
		process.kill(-child.pid!, signal);
		return true;
	} catch {
		return false;
	}
}

/** SIGTERM to the whole group, SIGKILL after STOP_TIMEOUT_MS if its leader is still alive; then SIGKILL to anything of it left. */
async function stopGroup(child: ChildProcess): Promise<void> {
	if (child.pid === undefined) return; // never started
	const exited = new Promise<void>(resolve => {
		if (child.exitCode !== null || child.signalCode !== null) resolve();
		else child.once("exit", () => resolve());
	});
	signalGroup(child, "SIGTERM");
	const force = setTimeout(() => signalGroup(child, "SIGKILL"), STOP_TIMEOUT_MS);
	await exited;
	clearTimeout(force);
	signalGroup(child, "SIGKILL"); // any process of the group that outlived its leader
}
