// Mailpit, the real SMTP server the tests and `npm start`'s sandbox send emails
// to, with an HTTP API to read what it received (and a web UI). MAILPIT_BIN
// when set, otherwise the one `npm install` built into .mailpit/
// (dev/install/mailpit.mjs). Never one from PATH, so a green run proves what
// npm install provides. Loopback only, on free ports; `stop` and `start` again
// keep the ports (a test takes the SMTP server down and brings it back).
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { projectRoot } from "../shared/paths";
import { freePort, waitForPort } from "./net";
import { stopProcess } from "./processes";
import { projectBinary } from "./project-binary";

const PROJECT_MAILPIT = path.join(projectRoot, ".mailpit", "mailpit");
const READY_TIMEOUT_MS = 30_000;

export interface Mailpit {
	/** smtp://127.0.0.1:<port>: what SMTP_URL is set to. */
	smtpUrl: string;
	/** Its web UI and API: http://127.0.0.1:<port>. */
	httpUrl: string;
	/** Stops it (SIGTERM); what it received is gone. */
	stop(): Promise<void>;
	/** Starts it again on the same ports, empty. */
	start(): Promise<void>;
}

/** The Mailpit binary to run; throws how to get one when there is none. */
export function mailpitBin(env: NodeJS.ProcessEnv = process.env): string {
	return projectBinary(env, {
		envVar: "MAILPIT_BIN",
		file: PROJECT_MAILPIT,
		missing:
			"No Mailpit in .mailpit/: `npm install` builds it with Go (1.26 or newer). " +
			"Re-run npm install and read its [mailpit] lines, or set MAILPIT_BIN to a mailpit binary.",
	});
}

/** Mailpit on two free ports of 127.0.0.1, ready (both ports accept connections). */
export async function startMailpit(): Promise<Mailpit> {
	const bin = mailpitBin();
	const [smtpPort, httpPort] = [await freePort(), await freePort()];
	let child: ChildProcess | null = null;
	async function start(): Promise<void> {
		const started = spawn(bin, ["--listen", `127.0.0.1:${httpPort}`, "--smtp", `127.0.0.1:${smtpPort}`, "--quiet"], {
			stdio: ["ignore", "ignore", "pipe"],
		});
		let output = "";
		started.stderr?.on("data", chunk => (output = (output + chunk.toString()).slice(-4000)));
		child = started;
		try {
			await waitForPort(smtpPort, READY_TIMEOUT_MS, () => started.exitCode === null);
			await waitForPort(httpPort, READY_TIMEOUT_MS, () => started.exitCode === null);
		} catch (err) {
			await stopProcess(started);
			throw new Error(`Mailpit did not start: ${(err as Error).message}\n${output}`.trim());
		}
	}
	await start();
	return {
		smtpUrl: `smtp://127.0.0.1:${smtpPort}`,
		httpUrl: `http://127.0.0.1:${httpPort}`,
		start,
		async stop() {
			if (child) await stopProcess(child);
			child = null;
		},
	};
}
