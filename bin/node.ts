// `npm run node`: one Moleculer node running the services named in SERVICES
// (all when unset), joined to the others over TRANSPORTER. docker-compose and
// scaled billing nodes start here.

import { createBroker, OWN_SIGNAL_HANDLING, stopOnSignals } from "../runtime/broker";
import { config } from "../shared/config";

async function main(): Promise<void> {
	const { services, transporter, mongoUrl, adminToken } = config();
	if (!mongoUrl) throw new Error("MONGO_URL must be set for `npm run node` (npm start uses an embedded database instead)");
	if (services.includes("gateway") && !adminToken) console.warn("ADMIN_TOKEN is not set: the admin API answers 401 to everyone");
	if (!transporter && services.length < 3) console.warn("TRANSPORTER is not set: this node cannot reach services running elsewhere");
	const broker = createBroker(services, OWN_SIGNAL_HANDLING);
	stopOnSignals(broker);
	await broker.start();
}

main().catch(err => {
	console.error(err instanceof Error ? err.message : err);
	process.exit(1);
});
