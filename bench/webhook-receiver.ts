// The merchant's webhook endpoint for the benchmark: a local HTTP server that
// answers 200 at once and notes when each event arrived. The delay of an event
// is its arrival minus the moment the checkout that caused it was answered.
import http from "node:http";
import type { AddressInfo } from "node:net";

/** A checkout ending OK sends these two. */
export const EVENTS_PER_CHECKOUT = 2;

interface Customer {
	answeredAt: number | null;
	arrivals: number[];
}

export interface WebhookWindow {
	/** Delays (ms) of every event of the checkouts answered in this window that has arrived. */
	delays(): number[];
	/** Events still expected from this window's checkouts. */
	missing(): number;
}

export interface WebhookReceiver {
	url: string;
	/** Checkouts answered from now on belong to the returned window. */
	window(): WebhookWindow;
	answered(customerId: number, answeredAt: number): void;
	/** Resolves once every event of the window has arrived, or after `timeoutMs`. */
	drain(window: WebhookWindow, timeoutMs: number): Promise<void>;
	/** Resolves once each of these customers has had `perCustomer` events (renewals: one TRANSACTION each), or after `timeoutMs`; answers the events still missing. */
	awaitEvents(customerIds: number[], perCustomer: number, timeoutMs: number): Promise<number>;
	stop(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
	const customers = new Map<number, Customer>();
	let current = new Set<number>();
	const customer = (id: number) => {
		let found = customers.get(id);
		if (!found) customers.set(id, (found = { answeredAt: null, arrivals: [] }));
		return found;
	};

	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on("data", chunk => chunks.push(chunk));
		req.on("end", () => {
			const arrivedAt = Date.now();
			res.writeHead(200, { "Content-Type": "text/plain" }).end("ok");
			try {
				const event = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { customerId?: number; type?: string };
				if ((event.type === "TRANSACTION" || event.type === "CONVERSION") && typeof event.customerId === "number")
					customer(event.customerId).arrivals.push(arrivedAt);
			} catch {
				// not an event of ours
			}
		});
	});
	// Keep-alive is up to the sender (notifications opens a connection per request).
	await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
	const { port } = server.address() as AddressInfo;

	const windowOf = (ids: Set<number>): WebhookWindow => ({
		delays() {
			const delays: number[] = [];
			for (const id of ids) {
				const c = customers.get(id)!;
				for (const at of c.arrivals) delays.push(at - c.answeredAt!);
			}
			return delays;
		},
		missing() {
			let missing = 0;
			for (const id of ids) missing += Math.max(0, EVENTS_PER_CHECKOUT - customers.get(id)!.arrivals.length);
			return missing;
		},
	});

	return {
		url: `http://127.0.0.1:${port}/webhooks`,
		window() {
			current = new Set();
			return windowOf(current);
		},
		answered(customerId, answeredAt) {
			customer(customerId).answeredAt = answeredAt;
			current.add(customerId);
		},
		async drain(window, timeoutMs) {
			const deadline = Date.now() + timeoutMs;
			while (window.missing() > 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 100));
		},
		async awaitEvents(customerIds, perCustomer, timeoutMs) {
			const missing = () => customerIds.reduce((n, id) => n + Math.max(0, perCustomer - (customers.get(id)?.arrivals.length ?? 0)), 0);
			const deadline = Date.now() + timeoutMs;
			while (missing() > 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 100));
			return missing();
		},
		async stop() {
			server.closeAllConnections();
			await new Promise(resolve => server.close(resolve));
		},
	};
}
