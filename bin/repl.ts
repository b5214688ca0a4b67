// `npm run repl`: an operator's node that joins the running cluster over
// TRANSPORTER and opens the Moleculer REPL with the commands of repl-commands.ts.

import { createBroker } from "../runtime/broker";
import { config } from "../shared/config";

async function main(): Promise<void> {
	if (!config().transporter) throw new Error("Set TRANSPORTER (e.g. nats://127.0.0.1:4222) so the REPL can join the cluster");
	const broker = createBroker([], { nodeID: `repl-${process.pid}`, logLevel: "warn" });
	await broker.start();
	await broker.repl();
}

main().catch(err => {
	console.error(err instanceof Error ? err.message : err);
	process.exit(1);
});
