// Tests never reach a real outside service (issue 35): a connection to
// anything but loopback is refused before any packet leaves, in the jest
// worker and in the Node processes tests start (loopback-only.js). The
// addresses used are TEST-NET-1 (192.0.2.0/24, RFC 5737), never routed, and
// Stripe's API name, which is refused before it is looked up.
import { spawn } from "node:child_process";
import dgram from "node:dgram";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import tls from "node:tls";
import Stripe from "stripe";

const TEST_NET = "192.0.2.1";
const REFUSED = { code: "LOOPBACK_ONLY", message: expect.stringContaining("loopback addresses only") };

/** The error a socket reports, and whether it ever started a DNS lookup or a connection. */
function outcomeOf(socket: net.Socket): Promise<{ error: NodeJS.ErrnoException; lookedUp: boolean; connected: boolean }> {
	let lookedUp = false;
	let connected = false;
	socket.on("lookup", () => {
		lookedUp = true;
	});
	socket.on("connect", () => {
		connected = true;
	});
	return new Promise(resolve => socket.on("error", error => resolve({ error, lookedUp, connected })));
}

describe("Connections from tests", () => {
	test("When a test opens a TCP connection to a non-loopback address, then it is refused with a clear error before it connects", async () => {
		const outcome = await outcomeOf(net.connect(443, TEST_NET));

		expect(outcome.error).toMatchObject(REFUSED);
		expect(outcome.error.message).toContain(`${TEST_NET}:443`);
		expect(outcome).toMatchObject({ lookedUp: false, connected: false });
	});

	test("When a test opens TLS to a host name outside, then it is refused before the name is looked up", async () => {
		const outcome = await outcomeOf(tls.connect({ host: "api.stripe.com", port: 443 }));

		expect(outcome.error).toMatchObject(REFUSED);
		expect(outcome.error.message).toContain("api.stripe.com:443");
		expect(outcome).toMatchObject({ lookedUp: false, connected: false });
	});

	test("When a test sends an HTTP request to a non-loopback address, then the request fails with the refusal", async () => {
		const error = await new Promise<Error>(resolve => http.get(`http://${TEST_NET}/`).on("error", resolve));

		expect(error).toMatchObject(REFUSED);
	});

	test("When a test fetches a URL outside, then fetch rejects with the refusal as its cause", async () => {
		const error: Error & { cause?: unknown } = await fetch(`http://${TEST_NET}/`).then(
			() => new Error("fetch answered"),
			err => err,
		);

		expect(error.cause).toMatchObject(REFUSED);
	});

	test("When a test forgets STRIPE_API_BASE, then the Stripe client fails instead of calling Stripe", async () => {
		const stripe = new Stripe("sk_test_never_sent", { maxNetworkRetries: 0 });

		const error = await stripe.customers.list().then(
			() => new Error("Stripe answered"),
			err => err,
		);

		expect(error).toMatchObject({ type: "StripeConnectionError", detail: REFUSED });
	});

	test("When a test sends a UDP datagram to a non-loopback address, then the send throws the refusal", () => {
		const socket = dgram.createSocket("udp4");
		try {
			expect(() => socket.send("x", 53, TEST_NET)).toThrow(expect.objectContaining(REFUSED));
		} finally {
			socket.close();
		}
	});

	test.each(["127.0.0.1", "localhost", "::1"])("When a test connects to %s, then it connects", async host => {
		const server = net.createServer(socket => socket.end("hello"));
		await new Promise<void>(resolve => server.listen(0, host === "localhost" ? "127.0.0.1" : host, resolve));
		try {
			const { port } = server.address() as AddressInfo;
			const greeting = await new Promise<string>((resolve, reject) => {
				const socket = net.connect({ host, port, family: host === "localhost" ? 4 : undefined });
				let text = "";
				socket.on("data", chunk => {
					text += chunk;
				});
				socket.on("end", () => resolve(text));
				socket.on("error", reject);
			});
			expect(greeting).toBe("hello");
		} finally {
			await new Promise(resolve => server.close(resolve));
		}
	});

	test("When a test starts a Node process, then the process is held to loopback too", async () => {
		const script = `require("node:net").connect(443, "${TEST_NET}").on("error", e => console.log(e.code)).on("connect", () => console.log("CONNECTED"))`;

		const output = await new Promise<string>((resolve, reject) => {
			const child = spawn(process.execPath, ["-e", script], { env: process.env, stdio: ["ignore", "pipe", "inherit"] });
			let out = "";
			child.stdout.on("data", chunk => {
				out += chunk;
			});
			child.on("error", reject);
			child.on("exit", () => resolve(out.trim()));
		});

		expect(output).toBe("LOOPBACK_ONLY");
	});
});
