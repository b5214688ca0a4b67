// A real nats-server for cluster tests: NATS_URL when set, otherwise one
// started on a free port. Missing binary = a loud failure, never a skip.
import { type ChildProcess, spawn } from "node:child_process";
import net from "node:net";

export interface NatsServer {
	url: string;
	stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = net.createServer().listen(0, "127.0.0.1", () => {
			const { port } = server.address() as net.AddressInfo;
			server.close(() => resolve(port));
		});
		server.on("error", reject);
	});
}

async function waitForPort(port: number, child: ChildProcess): Promise<void> {
	const deadline = Date.now() + 10_000;
	while (Date.now() < deadline) {
		if (child.exitCode !== null) throw new Error(`nats-server exited with code ${child.exitCode}`);
		const open = await new Promise<boolean>(resolve => {
			const socket = net.connect(port, "127.0.0.1", () => {
				socket.end();
				resolve(true);
			});
			socket.on("error", () => resolve(false));
		});
		if (open) return;
		await new Promise(r => setTimeout(r, 50));
	}
	throw new Error("nats-server did not start listening within 10 s");
}

export async function startNats(): Promise<NatsServer> {
	if (process.env.NATS_URL) return { url: process.env.NATS_URL, stop: async () => {} };
	const port = await freePort();
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
	await waitForPort(port, child);
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
