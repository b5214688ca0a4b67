// Two servers that speak Stripe's API, for the tests, started on free ports as the
// NATS server is (dev/processes.ts); both are spoken to with the official stripe library.
// - stripe-mock, Stripe's official mock: it checks every request against Stripe's OpenAPI
//   document and answers fixtures; it keeps no state and never declines. `npm install`
//   builds it into .stripe-mock/ (dev/install/stripe-mock.mjs); STRIPE_MOCK_BIN points
//   at another build. Never one from PATH, so a green run proves what npm install provides.
// - localstripe (PyPI, GPL-3.0, run as a separate process only), a stateful emulator:
//   customers, payment methods, intents, captures, refunds, declines and 3-D Secure, in
//   memory. The first test that needs it installs the pins of
//   dev/localstripe-requirements.txt (its venv's whole `pip freeze`) into .venv-localstripe/.
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Stripe from "stripe";
import { projectRoot } from "../shared/paths";
import { sleep } from "../shared/poll";
import { freePort, waitForPort } from "./net";
import { stopProcess } from "./processes";
import { projectBinary } from "./project-binary";

const PROJECT_STRIPE_MOCK = path.join(projectRoot, ".stripe-mock", "stripe-mock");
const STRIPE_MOCK_FIXTURES = path.join(projectRoot, ".stripe-mock", "fixtures3.json");
const VENV = path.join(projectRoot, ".venv-localstripe");
const REQUIREMENTS = path.join(projectRoot, "dev", "localstripe-requirements.txt");
/** The pins the venv holds, written last: a venv without it is unfinished. */
const INSTALLED = path.join(VENV, "installed-requirements.txt");
/** Held by the process installing: jest runs test files in parallel. */
const LOCK = `${VENV}.lock`;
const READY_TIMEOUT_MS = 30_000;

/*
 * localstripe 1.15.10's test cards (localstripe/resources.py), for the raw numbers of a
 * PaymentMethod (16 digits, a 3-digit CVC, an expiry year 2019-2099). Any other number, such
 * as 4242424242424242, succeeds.
 * - Declined when attached to a customer or confirmed on a SetupIntent (402 card_declined),
 *   but charged without being attached they succeed: 4000000000000002, 4000000000009995,
 *   4000000000009987, 4000000000009979, 4000000000000069, 4000000000000127,
 *   4000000000000119, 4242424242424241.
 * - Attached, then declined when charged (402 card_declined from a confirmed PaymentIntent):
 *   4000000000000341.
 * - 3-D Secure: a confirmed PaymentIntent or SetupIntent answers requires_action, even
 *   off_session (where Stripe would answer 402 authentication_required): 4000002500003155,
 *   4000002760003184, 4000000000003220, 4000000000003063; 4000008260003178 and
 *   4000008400001629 too, and their charge is declined once authenticated.
 * A 3-D Secure PaymentIntent is settled with POST /v1/payment_intents/{id}/_authenticate
 * (client_secret, success): localstripe's own route, not Stripe's.
 */

export interface StripeServer {
	url: string;
	stop(): Promise<void>;
}

/** The official library against a local server, with a dummy test key (stripe-mock wants three parts: sk_test_<anything>); no retries, so a failure shows once. */
export function stripeClient(server: { url: string }): Stripe {
	const { hostname, port } = new URL(server.url);
	return new Stripe("sk_test_dummy", { host: hostname, port, protocol: "http", maxNetworkRetries: 0, telemetry: false });
}

/** The stripe-mock binary to run; throws how to get one when there is none. */
export function stripeMockBin(env: NodeJS.ProcessEnv = process.env): string {
	return projectBinary(env, {
		envVar: "STRIPE_MOCK_BIN",
		file: PROJECT_STRIPE_MOCK,
		missing:
			"No stripe-mock in .stripe-mock/: `npm install` builds it with Go (1.22 or newer). " +
			"Re-run npm install and read its [stripe-mock] lines, or set STRIPE_MOCK_BIN to a stripe-mock binary.",
	});
}

/**
 * stripe-mock on a free port of 127.0.0.1; ready about 1 s later, once it has loaded Stripe's OpenAPI document.
 * `intentsSucceed`: its own bundled fixtures (.stripe-mock/fixtures3.json, kept there by npm install), with one
 * change: a PaymentIntent and a SetupIntent answer `succeeded`, as a card that passes does, instead of the bundled
 * `requires_payment_method`. A flow then goes past the card's verification, every request still checked against
 * Stripe's OpenAPI document; every other answer is the bundled fixture.
 * `paymentsDecline`: the same, but every PaymentIntent is declined with this decline code, as Stripe answers a
 * declined payment (`requires_payment_method` with a `card_error` as its `last_payment_error`); set-ups succeed.
 */
export async function startStripeMock(options: { intentsSucceed?: boolean; paymentsDecline?: string } = {}): Promise<StripeServer> {
	const bin = stripeMockBin();
	const port = await freePort();
	// HTTPS on a port the system picks: left at its default (12112) it would collide with another run's.
	const args = ["-http-addr", `127.0.0.1:${port}`, "-https-addr", "127.0.0.1:"];
	if (options.intentsSucceed || options.paymentsDecline) args.push("-fixtures", succeedingFixtures(options.paymentsDecline));
	return startServer("stripe-mock", bin, args, port, "re-run npm install, or set STRIPE_MOCK_BIN");
}

function succeedingFixtures(paymentsDecline: string | undefined): string {
	if (!existsSync(STRIPE_MOCK_FIXTURES)) {
		throw new Error(
			`No ${STRIPE_MOCK_FIXTURES}: \`npm install\` keeps stripe-mock's fixtures there (re-run it and read its [stripe-mock] lines)`,
		);
	}
	const fixtures = JSON.parse(readFileSync(STRIPE_MOCK_FIXTURES, "utf8"));
	fixtures.resources.payment_intent.status = "succeeded";
	fixtures.resources.setup_intent.status = "succeeded";
	if (paymentsDecline) {
		fixtures.resources.payment_intent.status = "requires_payment_method";
		fixtures.resources.payment_intent.last_payment_error = {
			type: "card_error",
			code: "card_declined",
			decline_code: paymentsDecline,
			message: "Your card was declined.",
		};
	}
	const file = path.join(mkdtempSync(path.join(os.tmpdir(), "stripe-mock-")), "fixtures.json");
	writeFileSync(file, JSON.stringify(fixtures));
	return file;
}

/** localstripe on a free port with an empty store, installed first if needed. */
export async function startLocalstripe(): Promise<StripeServer> {
	const bin = await ensureLocalstripe();
	const port = await freePort();
	// It listens on every interface ("::"), IPv4 included. --from-scratch: it ignores the state an
	// earlier run left in /tmp/localstripe.pickle, which it still rewrites after every change.
	return startServer("localstripe", bin, ["--port", String(port), "--from-scratch"], port, `delete ${VENV} and run again`);
}

/** The pinned localstripe in .venv-localstripe, installed from PyPI when missing or pinned otherwise; answers its command. */
export async function ensureLocalstripe(): Promise<string> {
	const bin = path.join(VENV, "bin", "localstripe");
	while (!installed()) {
		if (!takeLock()) {
			await sleep(500);
			continue;
		}
		try {
			if (!installed()) await install();
		} finally {
			rmSync(LOCK, { force: true });
		}
	}
	return bin;
}

function installed(): boolean {
	return existsSync(INSTALLED) && readFileSync(INSTALLED, "utf8") === readFileSync(REQUIREMENTS, "utf8");
}

/** True when this process now holds the lock; a lock whose process is gone is removed for the next try. */
function takeLock(): boolean {
	try {
		writeFileSync(LOCK, String(process.pid), { flag: "wx" });
		return true;
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
	}
	try {
		const holder = Number(readFileSync(LOCK, "utf8"));
		if (holder > 0 && !alive(holder)) rmSync(LOCK, { force: true });
	} catch {
		// released meanwhile
	}
	return false;
}

function alive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (err) {
		return (err as NodeJS.ErrnoException).code === "EPERM";
	}
}

async function install(): Promise<void> {
	const pinned = /^localstripe==(\S+)$/m.exec(readFileSync(REQUIREMENTS, "utf8"))![1];
	console.log(`Installing localstripe ${pinned} into ${VENV} (once; 15 to 30 s)`);
	await run("python3", ["-m", "venv", "--clear", VENV], "Python 3.9 or newer with venv (apt-get install python3 python3-venv)");
	// Every dependency is pinned in the file, so pip resolves nothing (--no-deps); --no-compile
	// leaves the bytecode to the first start, which needs only a few modules of it.
	const pip = path.join(VENV, "bin", "pip");
	await run(pip, ["install", "--quiet", "--disable-pip-version-check", "--no-deps", "--no-compile", "-r", REQUIREMENTS], "PyPI");
	copyFileSync(REQUIREMENTS, INSTALLED);
}

/** Runs a command to its end; its output shows only when it fails. */
function run(command: string, args: string[], needs: string): Promise<void> {
	return new Promise((resolve, reject) => {
		const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
		let output = "";
		child.stdout.on("data", chunk => (output += chunk));
		child.stderr.on("data", chunk => (output += chunk));
		child.once("error", err => reject(new Error(`Cannot run ${command} (${(err as NodeJS.ErrnoException).code}); it needs ${needs}`)));
		child.once("close", (code, signal) =>
			code === 0 ? resolve() : reject(new Error(`${command} ${args.join(" ")} failed (${signal ?? `exit ${code}`}):\n${output}`)),
		);
	});
}

/** Starts a server and waits until it accepts connections; its last output goes into the error when it does not. */
async function startServer(name: string, bin: string, args: string[], port: number, fix: string): Promise<StripeServer> {
	const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
	let output = "";
	const keep = (chunk: Buffer) => {
		output = (output + chunk.toString()).slice(-4000);
	};
	child.stdout.on("data", keep); // both log every request
	child.stderr.on("data", keep);
	const failed = new Promise<never>((_, reject) =>
		child.once("error", err => reject(new Error(`Cannot start ${bin} (${(err as NodeJS.ErrnoException).code}); ${fix}`))),
	);
	failed.catch(() => undefined); // a later failure shows as the process's exit, not as an unhandled rejection
	try {
		await Promise.race([waitForPort(port, READY_TIMEOUT_MS, () => child.exitCode === null), failed]);
	} catch (err) {
		await stopProcess(child);
		throw new Error(`${name} did not start: ${(err as Error).message}\n${output}`.trim());
	}
	return { url: `http://127.0.0.1:${port}`, stop: () => stopProcess(child) };
}
