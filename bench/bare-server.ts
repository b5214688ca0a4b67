// What the bare-driver baselines (baseline-server.ts, usage-baseline.ts) share:
// reading a request's body, and serving a handler until SIGTERM or SIGINT.
import http, { type IncomingMessage, type ServerResponse } from "node:http";

export function readBody(req: IncomingMessage): Promise<string> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		req.on("data", chunk => chunks.push(chunk));
		req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
		req.on("error", reject);
	});
}

/** Serves `handle` on 127.0.0.1:`port` (a failure answers 500); on a signal, closes the server and then `close`, and exits. */
export function serveBare(
	name: string,
	port: number,
	handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
	close: () => Promise<void>,
): void {
	const server = http.createServer((req, res) => {
		handle(req, res).catch(err => {
			console.error(`${name} request failed:`, err);
			if (!res.headersSent) res.writeHead(500).end();
		});
	});
	server.listen(port, "127.0.0.1");
	const stop = () => {
		server.closeAllConnections();
		server.close(() => void close().then(() => process.exit(0)));
	};
	process.on("SIGTERM", stop);
	process.on("SIGINT", stop);
}
