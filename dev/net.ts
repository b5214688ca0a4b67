// Ports for the processes the project starts itself (nats-server, cluster nodes).

import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import net from "node:net";
import { pollUntil } from "../shared/poll";

/**
 * A port nothing listens on, for a process that listens on it later. It lies below the kernel's ephemeral range: a port
 * bind(0) finds free is in that range, and an outgoing connection (to the database, to NATS, or a client retrying a
 * stopped server's port) can take it before the process listens, which then fails with EADDRINUSE.
 */
export async function freePort(): Promise<number> {
	const max = Math.min(ephemeralRangeStart(), PORTS_BELOW) - 1;
	for (let tries = 0; tries < 100; tries++) {
		const port = randomInt(FIRST_PORT, max + 1);
		if (handedOut.has(port)) continue;
		if (await canListen(port)) {
			handedOut.add(port);
			return port;
		}
	}
	throw new Error(`no free port between ${FIRST_PORT} and ${max}`);
}

/** Above the ports well-known servers use; below Linux's default ephemeral range (32768) and IANA's (49152). */
const FIRST_PORT = 20_000;
const PORTS_BELOW = 32_768;
/** Ports this process handed out: each once, as the first caller may not listen on it yet. */
const handedOut = new Set<number>();

function ephemeralRangeStart(): number {
	try {
		const [start] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
		return start > FIRST_PORT + 1000 ? start : PORTS_BELOW;
	} catch {
		return PORTS_BELOW;
	}
}

function canListen(port: number): Promise<boolean> {
	return new Promise(resolve => {
		const server = net.createServer();
		server.once("error", () => resolve(false));
		server.listen(port, () => server.close(() => resolve(true)));
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
