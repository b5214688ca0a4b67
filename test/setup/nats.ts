// A real NATS server for cluster tests: NATS_URL when set, otherwise the
// project's own (dev/processes.ts, dev/nats-server.ts) on a free port.
// Missing binary = a loud failure, never a skip.
import { startNatsServer } from "../../dev/processes";

export interface NatsServer {
	url: string;
	stop(): Promise<void>;
}

/** `port`: listen there (a fault test stops NATS and starts it again on the same port). */
export async function startNats(port?: number): Promise<NatsServer> {
	if (process.env.NATS_URL && port === undefined) return { url: process.env.NATS_URL, stop: async () => {} };
	const { url, stop } = await startNatsServer({ port });
	return { url, stop };
}
