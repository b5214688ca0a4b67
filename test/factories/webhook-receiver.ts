// A merchant's webhook endpoint for tests: a real HTTP server on 127.0.0.1
// that records every request (headers and raw body) and answers as told:
// statuses in sequence, slowly, or not at all (stopped, then restarted on the
// same port).
import { createHmac, timingSafeEqual } from "node:crypto";
import http, { type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import type { EventType } from "../../shared/contracts/notifications";

export interface ReceivedRequest {
	method: string;
	path: string;
	headers: IncomingHttpHeaders;
	rawBody: string;
	/** Date.now() when the whole body had arrived. */
	receivedAt: number;
}

/** The envelope every webhook carries (docs/webhooks.md), as a test reads it; `GET /api/events` answers the same. */
export interface Envelope {
	id: string;
	type: EventType;
	createdAt: string;
	accountId: number;
	customerId: number;
	transaction_id?: number;
	data: { customer?: { id: number; status: string }; transaction?: { id: number; type: string; amount: number } };
}

export interface WebhookReceiver {
	/** The endpoint to configure as the account's webhookUrl. */
	readonly url: string;
	readonly port: number;
	readonly requests: ReceivedRequest[];
	/** The next requests are answered with these statuses, in order; after them, the default. */
	answer(...statuses: number[]): void;
	/** The status of requests `answer` did not plan (200 unless set). */
	answerByDefault(status: number): void;
	/** Answer every request this many ms after it arrived (0 = at once). */
	delay(ms: number): void;
	/** The Location header of 3xx answers. */
	redirectTo(location: string): void;
	/** Requests whose X-Webhook-Id is this event id. */
	requestsFor(eventId: string): ReceivedRequest[];
	/** Resolves once `count` requests have arrived in all. */
	waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
	/** Closes the port (connections refused) until `start`. */
	stop(): Promise<void>;
	/** Listens again on the same port. */
	start(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
	const requests: ReceivedRequest[] = [];
	let statuses: number[] = [];
	let fallback = 200;
	let delayMs = 0;
	let location = "http://127.0.0.1:9/elsewhere";
	const pending = new Set<NodeJS.Timeout>();

	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on("data", chunk => chunks.push(chunk));
		req.on("end", () => {
			requests.push({
				method: req.method ?? "",
				path: req.url ?? "",
				headers: req.headers,
				rawBody: Buffer.concat(chunks).toString("utf8"),
				receivedAt: Date.now(),
			});
			const status = statuses.shift() ?? fallback;
			const reply = () => {
				if (res.destroyed) return;
				if (status >= 300 && status < 400) res.setHeader("Location", location);
				res.writeHead(status, { "Content-Type": "text/plain" }).end(status < 300 ? "ok" : "no");
			};
			if (delayMs === 0) return reply();
			const timer = setTimeout(() => {
				pending.delete(timer);
				reply();
			}, delayMs);
			pending.add(timer);
		});
	});

	const listen = (port: number) =>
		new Promise<void>((resolve, reject) => {
			server.once("error", reject);
			server.listen(port, "127.0.0.1", () => {
				server.off("error", reject);
				resolve();
			});
		});
	await listen(0);
	const port = (server.address() as AddressInfo).port;

	return {
		url: `http://127.0.0.1:${port}/webhooks`,
		port,
		requests,
		answer(...next) {
			statuses = next;
		},
		answerByDefault(status) {
			fallback = status;
		},
		delay(ms) {
			delayMs = ms;
		},
		redirectTo(target) {
			location = target;
		},
		requestsFor(eventId) {
			return requests.filter(r => r.headers["x-webhook-id"] === eventId);
		},
		async waitForRequests(count, timeoutMs = 10_000) {
			const deadline = Date.now() + timeoutMs;
			while (requests.length < count) {
				if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${count} webhook requests, got ${requests.length}`);
				await new Promise(r => setTimeout(r, 20));
			}
			return requests;
		},
		async stop() {
			for (const timer of pending) clearTimeout(timer);
			pending.clear();
			if (!server.listening) return;
			const closed = new Promise<void>(resolve => server.close(() => resolve()));
			server.closeAllConnections();
			await closed;
		},
		async start() {
			if (!server.listening) await listen(port);
		},
	};
}

/**
 * Checks X-Webhook-Signature exactly as docs/webhooks.md tells merchants to:
 * `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, compared
 * in constant time, refused when the timestamp is more than 5 minutes away.
 */
export function verifySignature(secret: string, header: string, rawBody: string, toleranceSeconds = 300): boolean {
	const parts = new Map(header.split(",").map(part => part.split("=", 2) as [string, string]));
	const t = parts.get("t") ?? "";
	const v1 = parts.get("v1") ?? "";
	if (!/^\d+$/.test(t) || !/^[0-9a-f]{64}$/.test(v1)) return false;
	if (Math.abs(Date.now() / 1000 - Number(t)) > toleranceSeconds) return false;
	const expected = createHmac("sha256", secret).update(`${t}.${rawBody}`).digest();
	return timingSafeEqual(Buffer.from(v1, "hex"), expected);
}
