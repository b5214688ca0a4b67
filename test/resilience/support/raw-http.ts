// HTTP for the fuzzer: requests exactly as generated (any method, raw path,
// raw header bytes, raw body), over a keep-alive agent so 10,000 requests go
// quickly; and a raw socket for what no HTTP client will send (malformed
// request lines, broken chunking, oversized headers).
import http from "node:http";
import net from "node:net";

export interface RawRequest {
	method: string;
	/** Sent as is: already percent-encoded where it needs to be. */
	path: string;
	headers: Record<string, string>;
	/** Sent as is (utf8 for strings). */
	body?: string | Buffer;
}

export interface RawResponse {
	status: number;
	headers: http.IncomingHttpHeaders;
	body: string;
}

export function createClient(baseUrl: string, maxSockets: number) {
	const agent = new http.Agent({ keepAlive: true, maxSockets });
	const { hostname, port } = new URL(baseUrl);

	function send(request: RawRequest, timeoutMs = 20_000): Promise<RawResponse> {
		return new Promise((resolve, reject) => {
			const headers = { ...request.headers };
			// Node's client sends a GET's body with neither Content-Length nor chunking, which would
			// make the body the connection's next request: always say how long it is.
			const framed = Object.keys(headers).some(h => /^(content-length|transfer-encoding)$/i.test(h));
			if (request.body !== undefined && !framed) headers["Content-Length"] = String(Buffer.byteLength(request.body));
			const req = http.request({ host: hostname, port, agent, method: request.method, path: request.path, headers }, res => {
				const chunks: Buffer[] = [];
				res.on("data", chunk => chunks.push(chunk));
				res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
				res.on("error", reject);
			});
			req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
			req.on("error", reject);
			req.end(request.body);
		});
	}

	return { send, close: () => agent.destroy() };
}

/**
 * Writes bytes on a fresh connection and returns what came back: one whole
 * answer, or what had arrived when the server closed the connection or
 * `timeoutMs` passed. The connection is not half-closed after writing: Node's
 * server aborts a request still in progress when its client half-closes.
 */
export function sendRawBytes(baseUrl: string, bytes: string | Buffer, timeoutMs = 5000): Promise<string> {
	const { hostname, port } = new URL(baseUrl);
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		const socket = net.connect(Number(port), hostname, () => socket.write(bytes));
		const timer = setTimeout(() => socket.destroy(), timeoutMs);
		socket.on("data", chunk => {
			chunks.push(chunk);
			if (isComplete(Buffer.concat(chunks).toString("latin1"))) socket.destroy();
		});
		socket.on("close", () => {
			clearTimeout(timer);
			resolve(Buffer.concat(chunks).toString("latin1"));
		});
		socket.on("error", err => ((err as NodeJS.ErrnoException).code === "ECONNRESET" ? undefined : reject(err)));
	});
}

/** A whole answer: its head, and the body its Content-Length or chunking announces. */
function isComplete(text: string): boolean {
	const end = text.indexOf("\r\n\r\n");
	if (end < 0) return false;
	const head = text.slice(0, end).toLowerCase();
	const body = text.slice(end + 4);
	const length = /\r\ncontent-length: *(\d+)/.exec(head);
	if (length) return Buffer.byteLength(body, "latin1") >= Number(length[1]);
	if (/\r\ntransfer-encoding: *chunked/.test(head)) return body.endsWith("0\r\n\r\n");
	// Neither: the body ends when the server closes the connection.
	return false;
}

/** Status, headers and body of a raw HTTP/1.1 answer. */
export function parseRawResponse(text: string): RawResponse | null {
	const end = text.indexOf("\r\n\r\n");
	if (end < 0) return null;
	const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
	const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
	if (!match) return null;
	const headers: http.IncomingHttpHeaders = {};
	for (const line of lines) {
		const colon = line.indexOf(":");
		if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
	}
	let body = text.slice(end + 4);
	if (String(headers["transfer-encoding"] ?? "").includes("chunked")) body = dechunk(body);
	return { status: Number(match[1]), headers, body };
}

function dechunk(text: string): string {
	let out = "";
	let rest = text;
	for (;;) {
		const lineEnd = rest.indexOf("\r\n");
		if (lineEnd < 0) return out;
		const size = parseInt(rest.slice(0, lineEnd), 16);
		if (!size) return out;
		out += rest.slice(lineEnd + 2, lineEnd + 2 + size);
		rest = rest.slice(lineEnd + 2 + size + 2);
	}
}
