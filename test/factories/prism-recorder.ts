// In front of Prism serving Adyen's Checkout API document (dev/adyen-servers.ts):
// a real HTTP server on 127.0.0.1 that passes each request on unchanged and
// keeps what our connector sent and what Prism answered, so a test reads what
// reached "Adyen" as the localstripe tests read Stripe's records. It may pick
// one of the document's examples for a request (Prism's documented
// `Prefer: example=<name>` or `code=<status>`); Prism still validates every
// request against the document (--errors) and answers only its examples.
import http, { type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface PrismExchange {
	method: string;
	path: string;
	headers: IncomingHttpHeaders;
	body: Record<string, unknown>;
	status: number;
	answer: Record<string, unknown>;
}

export interface PrismRecorder {
	url: string;
	exchanges: PrismExchange[];
	/** The example to ask Prism for, per request (undefined: the document's first). */
	prefer: (path: string, body: Record<string, unknown>) => string | undefined;
	stop(): Promise<void>;
}

const json = (text: string): Record<string, unknown> => {
	try {
		return JSON.parse(text);
	} catch {
		return { unparsed: text };
	}
};

export async function startPrismRecorder(prismUrl: string): Promise<PrismRecorder> {
	const exchanges: PrismExchange[] = [];
	const recorder: PrismRecorder = { url: "", exchanges, prefer: () => undefined, stop: async () => undefined };
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on("data", chunk => chunks.push(chunk));
		req.on("end", async () => {
			const text = Buffer.concat(chunks).toString("utf8");
			const body = json(text);
			const headers: Record<string, string> = {};
			for (const [name, value] of Object.entries(req.headers))
				if (typeof value === "string" && name !== "host" && name !== "content-length") headers[name] = value;
			// A card paid at once unless a test picks another example: the document's first is a 3-D Secure action since v72.
			const prefer = recorder.prefer(req.url ?? "", body) ?? (req.url === "/payments" ? "example=card-direct" : undefined);
			if (prefer) headers.prefer = prefer;
			try {
				const answer = await fetch(`${prismUrl}${req.url}`, { method: req.method, headers, body: req.method === "GET" ? undefined : text });
				const answerText = await answer.text();
				exchanges.push({
					method: req.method ?? "",
					path: req.url ?? "",
					headers: req.headers,
					body,
					status: answer.status,
					answer: json(answerText),
				});
				res.writeHead(answer.status, { "Content-Type": answer.headers.get("content-type") ?? "application/json" }).end(answerText);
			} catch (err) {
				res.writeHead(502).end(String(err));
			}
		});
	});
	await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
	recorder.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	recorder.stop = () =>
		new Promise<void>(resolve => {
			server.closeAllConnections();
			server.close(() => resolve());
		});
	return recorder;
}
