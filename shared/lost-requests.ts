// Requests a NATS connection took with it (docs/operations.md#a-nats-cluster).
// Core NATS delivers at most once: what was on the sockets of a server that
// died, what a node published while it reconnected (its NATS client drops
// it) and what was sent to a node before it subscribed again are gone, and
// their callers would wait their whole timeout. So a node connected again
// says so on `<prefix>.LOST`; it and every node that hears it ask each other,
// on `<prefix>.LOST.<node>`, which of their requests the other is still
// working on, and fail the ones it is not (Moleculer's RequestRejectedError:
// the Retry middleware tries an idempotent action again at once, anything
// else answers 503 at the gateway). Invariants:
//   - a request is failed only after the node it went to answered, once it had
//     the question, that it is not working on it: a request the question
//     followed on the same connection arrived before it if it arrived at all,
//     and the answer of one it finished went out before that reply;
//   - only requests already sent when the question was asked are judged;
//   - a node that does not answer leaves its requests to their timeout.
// A request sent on a connection that dropped while its server lived on may
// still be on its way when the question, on the new connection, overtakes
// it: it is failed and may still run, as after a timeout, so only idempotent
// actions are tried again.
import { Errors, type Middleware, type ServiceBroker } from "moleculer";

/** What this middleware reads of Moleculer's transit and of the NATS client behind it. */
interface PendingRequest {
	nodeID: string;
	action: { name: string };
	reject(err: Error): void;
}
interface NatsClient {
	subscribe(subject: string, options: { callback(err: Error | null, msg: { data: Uint8Array }): void }): { unsubscribe(): void };
	publish(subject: string, data: Uint8Array): void;
	status(): AsyncIterable<{ type: string }>;
}
interface Transit {
	pendingRequests: Map<string, PendingRequest>;
	tx: { prefix: string; client?: NatsClient | null };
}
interface Packet {
	type?: string;
	payload?: { id?: string; sender?: string };
}

type Note =
	/** `from` is connected again. */
	| { kind: "reconnected"; from: string }
	/** Which of my requests are you working on? */
	| { kind: "ask"; from: string }
	/** Those I am working on of the asker's requests. */
	| { kind: "working"; from: string; ids: string[] };

/** A request received long ago without its answer going out is forgotten (it had no caller waiting by then). */
const FORGET_AFTER_MS = 10 * 60_000;

export function LostRequests(): Middleware {
	/** Requests received from other nodes whose answer has not gone out yet: id -> caller and when. */
	const working = new Map<string, { from: string; at: number }>();
	/** The requests pending when each node was asked, by that node. */
	const asked = new Map<string, string[]>();
	let stop = () => {};

	function workingFor(node: string): string[] {
		const ids: string[] = [];
		const forgotten = Date.now() - FORGET_AFTER_MS;
		for (const [id, request] of working) {
			if (request.at < forgotten) working.delete(id);
			else if (request.from === node) ids.push(id);
		}
		return ids;
	}

	function listen(broker: ServiceBroker, transit: Transit, client: NatsClient): void {
		const me = broker.nodeID;
		const subject = `${transit.tx.prefix}.LOST`;
		const send = (to: string | null, note: Note) =>
			client.publish(to ? `${subject}.${to}` : subject, new TextEncoder().encode(JSON.stringify(note)));
		/** Notes the requests to `node` pending now, all sent before what follows. */
		const snapshot = (node: string | null) => {
			for (const [id, request] of transit.pendingRequests) {
				if (node && request.nodeID !== node) continue;
				const ids = asked.get(request.nodeID) ?? asked.set(request.nodeID, []).get(request.nodeID)!;
				ids.push(id);
			}
		};
		const judge = (node: string, stillWorking: string[]) => {
			const keep = new Set(stillWorking);
			for (const id of asked.get(node) ?? []) {
				const request = transit.pendingRequests.get(id);
				if (!request || keep.has(id)) continue;
				transit.pendingRequests.delete(id);
				broker.logger.warn(
					`Request '${request.action.name}' to '${node}' was lost with a NATS connection: failed now, not at its timeout.`,
				);
				request.reject(new Errors.RequestRejectedError({ action: request.action.name, nodeID: node }));
			}
			asked.delete(node);
		};
		const receive = (note: Note) => {
			if (note.from === me) return;
			if (note.kind === "working") return judge(note.from, note.ids);
			send(note.from, { kind: "working", from: me, ids: workingFor(note.from) });
			if (note.kind === "reconnected") {
				asked.delete(note.from);
				snapshot(note.from);
				send(note.from, { kind: "ask", from: me });
			}
		};
		const callback = (err: Error | null, msg: { data: Uint8Array }) => {
			if (!err) receive(JSON.parse(new TextDecoder().decode(msg.data)) as Note);
		};
		const subscriptions = [client.subscribe(subject, { callback }), client.subscribe(`${subject}.${me}`, { callback })];
		let stopped = false;
		void (async () => {
			for await (const status of client.status()) {
				if (stopped) break;
				if (status.type !== "reconnect") continue;
				asked.clear();
				snapshot(null);
				send(null, { kind: "reconnected", from: me });
			}
		})().catch(() => undefined);
		stop = () => {
			stopped = true;
			for (const s of subscriptions) s.unsubscribe();
		};
	}

	return {
		name: "LostRequests",
		transitMessageHandler(next: (cmd: string, packet: Packet) => unknown) {
			return (cmd: string, packet: Packet) => {
				const { id, sender } = packet.payload ?? {};
				if (cmd === "REQ" && id && sender) working.set(id, { from: sender, at: Date.now() });
				return next(cmd, packet);
			};
		},
		transitPublish(next: (packet: Packet) => Promise<unknown>) {
			return (packet: Packet) => {
				const sent = next(packet);
				const id = packet.type === "RES" ? packet.payload?.id : undefined;
				// Forgotten once its answer is handed to the client: a later "working" reply follows it on the connection.
				return id ? sent.finally(() => working.delete(id)) : sent;
			};
		},
		async started(broker: ServiceBroker) {
			const transit = (broker as unknown as { transit?: Transit }).transit;
			const client = transit?.tx.client;
			if (transit && client && typeof client.status === "function") listen(broker, transit, client);
		},
		async stopped() {
			stop();
		},
	} as unknown as Middleware;
}
