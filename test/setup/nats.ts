// A real nats-server for cluster tests: NATS_URL when set, otherwise one
// started on a free port. Missing binary = a loud failure, never a skip.
import { spawn } from "node:child_process";
import { freePort, waitForPort } from "../../shared/net";

export interface NatsServer {
	url: string;
	stop(): Promise<void>;
}

/** `port`: listen there (a fault test stops NATS and starts it again on the same port). */
export async function startNats(port?: number): Promise<NatsServer> {
	if (process.env.NATS_URL && port === undefined) return { url: process.env.NATS_URL, stop: async () => {} };
	port ??= await freePort();
	const child = spawn("nats-server", ["-a", "127.0.0.1", "-p", String(port)], { stdio: "ignore" });
	const spawned = new Promise<void>((resolve, reject) => {
		child.once("spawn", resolve);
		child.once("error", err =>
			reject(
				new Error(
					`Cannot start nats-server (${(err as NodeJS.ErrnoException).code}). Install it with ` +
						"`apt-get install nats-server` (what .ci/run does), or set NATS_URL to a running NATS server.",
				),
			),
		);
	});
	await spawned;
	await waitForPort(port, 10_000, () => child.exitCode === null);
	return {
		url: `nats://127.0.0.1:${port}`,
		stop: () =>
			new Promise<void>(resolve => {
				if (child.exitCode !== null) return resolve();
				child.once("exit", () => resolve());
				child.kill("SIGTERM");
			}),
	};
}
