// The network between the service and a server, cut on purpose: a TCP relay
// that passes everything until told to lose the answer to one request (the
// request reaches the server and is done there; its answer never comes back)
// and then refuses every connection until healed. A real outage seen from
// our side, with the server's records kept: localstripe keeps its state in
// memory, so killing its process would lose exactly what the test counts.
// `refuse()` is the other outage: the relay stops listening, so every
// connection is refused (ECONNREFUSED) and no byte reaches the server.
// `holdAnswerTo()` is a slow network instead: one request's answer is kept
// back (the request was done) until the test releases it, the connection open.
import net from "node:net";
import { freePort } from "../../dev/net";

/** An answer the relay keeps back: the server has done the request; `release()` sends its answer on. */
export interface HeldAnswer {
	release(): void;
}

export interface NetworkCut {
	/** The relay's address, to use instead of the server's. */
	readonly url: string;
	/** The next request whose first line matches is sent on, its answer dropped, and the network cut. */
	loseAnswerTo(requestLine: RegExp): Promise<void>;
	/** The next request whose first line matches is sent on and its answer kept back; resolves once the server answered. */
	holdAnswerTo(requestLine: RegExp): Promise<HeldAnswer>;
	/** Whether the cut has happened. */
	readonly isCut: boolean;
	/** Stops listening until healed: every connection is refused (ECONNREFUSED), nothing reaches the server. */
	refuse(): Promise<void>;
	/** Connections are accepted and relayed again. */
	heal(): Promise<void>;
	close(): Promise<void>;
}

export async function cutBetween(target: string): Promise<NetworkCut> {
	const { hostname, port: targetPort } = new URL(target);
	const port = await freePort();
	const sockets = new Set<net.Socket>();
	let watch: RegExp | null = null;
	let holdWatch: RegExp | null = null;
	let held: (answer: HeldAnswer) => void = () => undefined;
	let cut = false;
	let cutDone: () => void = () => undefined;
	let refused = false;

	const server = net.createServer(client => {
		if (cut) return client.destroy();
		const upstream = net.connect(Number(targetPort), hostname);
		sockets.add(client).add(upstream);
		let dropAnswers = false;
		// The answer kept back on this connection (null: none is), and whether the test was told of it yet.
		let keptBack: Buffer[] | null = null;
		client.on("data", chunk => {
			const line = chunk.toString("latin1").split("\r\n", 1)[0];
			if (watch?.test(line)) {
				watch = null;
				dropAnswers = true;
			} else if (holdWatch?.test(line)) {
				holdWatch = null;
				keptBack = [];
			}
			upstream.write(chunk);
		});
		upstream.on("data", chunk => {
			if (keptBack) {
				if (keptBack.length === 0)
					held({
						release() {
							const answer = Buffer.concat(keptBack ?? []);
							keptBack = null;
							client.write(answer);
						},
					});
				keptBack.push(chunk);
				return;
			}
			if (!dropAnswers) return void client.write(chunk);
			// The server answered: it did the request. The answer is lost, and so is the network.
			cutAll();
		});
		const end = () => {
			client.destroy();
			upstream.destroy();
			sockets.delete(client);
			sockets.delete(upstream);
		};
		client.on("close", end).on("error", end);
		upstream.on("close", end).on("error", end);
	});

	function cutAll(): void {
		cut = true;
		for (const socket of sockets) socket.destroy();
		sockets.clear();
		cutDone();
	}

	const listen = () => new Promise<void>(resolve => server.listen(port, "127.0.0.1", resolve));
	await listen();
	return {
		url: `http://127.0.0.1:${port}`,
		get isCut() {
			return cut;
		},
		loseAnswerTo(requestLine) {
			watch = requestLine;
			return new Promise(resolve => {
				cutDone = resolve;
			});
		},
		holdAnswerTo(requestLine) {
			holdWatch = requestLine;
			return new Promise(resolve => {
				held = resolve;
			});
		},
		async refuse() {
			refused = true;
			const closed = new Promise<void>(resolve => server.close(() => resolve()));
			// Kept-alive connections would still carry requests: they go too.
			for (const socket of sockets) socket.destroy();
			sockets.clear();
			await closed;
		},
		async heal() {
			cut = false;
			if (refused) {
				refused = false;
				await listen();
			}
		},
		close: () =>
			new Promise(resolve => {
				for (const socket of sockets) socket.destroy();
				if (refused) resolve();
				else server.close(() => resolve());
			}),
	};
}
