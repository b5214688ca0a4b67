// `npm start` as a real process, as a newcomer runs it: the embedded database
// with its data in a folder, every service in one process.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import request from "supertest";
import { projectRoot } from "../../shared/paths";
import type { TestApp } from "../setup/app";

export interface Started {
	child: ChildProcess;
	output: () => string;
	url: string;
	/** The factories' view of it (test/factories take a TestApp); it has no broker in this process. */
	app: TestApp;
}

/**
 * Starts `npm start` on a data folder. `detached` puts it in a process group of its own (with the database server
 * it starts), so a test can kill the whole group at once, as a power cut would.
 */
export async function npmStart(dataDir: string, options: { env?: NodeJS.ProcessEnv; detached?: boolean } = {}): Promise<Started> {
	const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "warn", ...options.env };
	delete env.MONGO_URL;
	if (!options.env?.ADMIN_TOKEN) delete env.ADMIN_TOKEN;
	const child = spawn(process.execPath, [path.join(projectRoot, "node_modules/tsx/dist/cli.mjs"), "bin/start.ts"], {
		cwd: projectRoot,
		env,
		detached: options.detached ?? false,
	});
	let output = "";
	child.stdout!.on("data", chunk => (output += chunk));
	child.stderr!.on("data", chunk => (output += chunk));
	const startedAt = Date.now();
	const url = await new Promise<string>((resolve, reject) => {
		const timer = setTimeout(() => reject(new Error(`npm start did not come up in 60 s:\n${output}`)), 60_000);
		child.stdout!.on("data", () => {
			const match = /running at (http:\/\/localhost:\d+)/.exec(output);
			// "Health:" is the last line it prints.
			if (match && output.includes("Health:")) {
				clearTimeout(timer);
				resolve(match[1]);
			}
		});
		child.once("exit", (code, signal) =>
			reject(new Error(`npm start exited with ${signal ?? `code ${code}`} after ${Date.now() - startedAt} ms:\n${output}`)),
		);
	}).catch(err => {
		// A start that failed must not outlive the test (it would keep jest from exiting).
		killGroup(child, options.detached ?? false);
		throw err;
	});
	const app: TestApp = {
		broker: undefined as never,
		url,
		http: () => request(url),
		stop: async () => void (await stopNpmStart({ child })),
	};
	return { child, output: () => output, url, app };
}

/** SIGTERM, as an operator stops it; resolves with its exit code. */
export async function stopNpmStart(started: Pick<Started, "child">): Promise<number | null> {
	if (started.child.exitCode !== null || started.child.signalCode !== null) return started.child.exitCode;
	const exited = new Promise<number | null>(resolve => started.child.once("exit", code => resolve(code)));
	started.child.kill("SIGTERM");
	return exited;
}

/** SIGKILL to the process, or to its whole process group when it was started detached. */
export function killGroup(child: ChildProcess, group: boolean): void {
	try {
		if (group && child.pid) process.kill(-child.pid, "SIGKILL");
		else child.kill("SIGKILL");
	} catch {
		// already gone
	}
}
