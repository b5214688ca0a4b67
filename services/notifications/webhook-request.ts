// One webhook POST: http or https only, redirects never followed (Node's
// request does not follow them), one deadline for DNS, connection and answer.
// For production accounts the address actually connected to must pass the
// address policy: the custom `lookup` filters what DNS returns, so a name
// that resolves (or later re-resolves) to 127.0.0.1 cannot get through, and an
// IP-literal host, which Node connects to without a lookup, is checked first.
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { refusalOf } from "./address-policy";

export interface WebhookRequest {
	url: string;
	body: string;
	headers: Record<string, string>;
	timeoutMs: number;
	/** Sandbox accounts may reach localhost and private networks. */
	allowPrivateAddresses: boolean;
}

export interface WebhookResponse {
	/** The receiver's status, or null when none came. */
	statusCode: number | null;
	error: string | null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** dns.lookup keeping only addresses the policy allows; none left -> the refusal as the connection error. */
export function guardedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
	dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
		if (err) return callback(err, "");
		const allowed = addresses.filter(a => refusalOf(a.address) === null);
		if (allowed.length === 0) {
			const refusal = addresses.length ? refusalOf(addresses[0].address)! : `refused: ${hostname} has no address`;
			return callback(Object.assign(new Error(refusal), { code: "EREFUSEDADDRESS" }), "");
		}
		// Node asks for every address when it races IPv4 and IPv6 (autoSelectFamily), one otherwise.
		if (options.all) callback(null, allowed);
		else callback(null, allowed[0].address, allowed[0].family);
	});
}

function describeStatus(statusCode: number): string | null {
	if (statusCode >= 200 && statusCode < 300) return null;
	if (statusCode >= 300 && statusCode < 400) return `HTTP ${statusCode}: redirects are not followed`;
	return `HTTP ${statusCode}`;
}

/** Never rejects: every failure comes back as `error`. */
export function postWebhook(request: WebhookRequest): Promise<WebhookResponse> {
	let url: URL;
	try {
		url = new URL(request.url);
	} catch {
		return Promise.resolve({ statusCode: null, error: "invalid webhook URL" });
	}
	if (url.protocol !== "http:" && url.protocol !== "https:") {
		return Promise.resolve({ statusCode: null, error: `refused: ${url.protocol} URLs are not allowed, only http: and https:` });
	}
	const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
	if (!request.allowPrivateAddresses && net.isIP(host)) {
		const refusal = refusalOf(host);
		if (refusal) return Promise.resolve({ statusCode: null, error: refusal });
	}

	return new Promise(resolve => {
		let answered = false;
		const answer = (response: WebhookResponse) => {
			if (answered) return;
			answered = true;
			resolve(response);
		};
		const transport = url.protocol === "https:" ? https : http;
		const req = transport.request(
			url,
			{
				method: "POST",
				headers: { ...request.headers, "Content-Length": String(Buffer.byteLength(request.body)) },
				// A connection of its own, so every request goes through the lookup below.
				agent: false,
				...(request.allowPrivateAddresses ? {} : { lookup: guardedLookup }),
			},
			res => {
				const statusCode = res.statusCode ?? 0;
				answer({ statusCode, error: describeStatus(statusCode) });
				// The answer's body is not needed: drain it (the deadline still bounds it).
				res.on("error", () => {});
				res.resume();
			},
		);
		// One deadline for the whole exchange, body included.
		const deadline = setTimeout(() => req.destroy(new Error(`timeout after ${request.timeoutMs} ms`)), request.timeoutMs);
		req.on("close", () => clearTimeout(deadline));
		req.on("error", err => answer({ statusCode: null, error: err.message || String(err) }));
		req.end(request.body);
	});
}
