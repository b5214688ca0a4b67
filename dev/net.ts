// Ports for the processes the project starts itself (nats-server, cluster nodes).

import net from "node:net";
import { pollUntil } from "../shared/poll";

export async function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = net.createServer().listen(0, "127.0.0.1", () => {
			const { port } = server.address() as net.AddressInfo;
			server.close(() => resolve(port));
		});
		server.on("error", reject);
	});
}

/** Resolves once something accepts connections on the port; rejects after `timeoutMs` or when `alive()` turns false. */
export async function waitForPort(port: number, timeoutMs: number, alive: () => boolean = () => true): Promise<void> {
	const listening = await pollUntil(
		async () => {
			if (!alive()) throw new Error(`the process meant to listen on port ${port} exited`);
			const open = await new Promise<boolean>(resolve => {
				const socket = net.connect(port, "127.0.0.1", () => {
					socket.end();
					resolve(true);
				});
				socket.on("error", () => resolve(false));
			});
			return open || undefined;
		},
		{ intervalMs: 50, timeoutMs },
	);
	if (!listening) throw new Error(`nothing listened on port ${port} within ${timeoutMs} ms`);
}
