// Which NATS server the project runs (tests, `npm run cluster`, the benchmark):
// NATS_SERVER_BIN when set, otherwise the one `npm install` built into
// .nats-server/ (dev/install/nats-server.mjs). Never one from PATH, so
// that a green run proves what `npm install` provides on a fresh machine.
import { existsSync } from "node:fs";
import path from "node:path";
import { projectRoot } from "../shared/paths";

const PROJECT_NATS_SERVER = path.join(projectRoot, ".nats-server", "nats-server");

/** The NATS server binary to run; throws how to get one when there is none. */
export function natsServerBin(env: NodeJS.ProcessEnv = process.env): string {
	const configured = env.NATS_SERVER_BIN;
	if (configured) {
		if (!existsSync(configured)) throw new Error(`NATS_SERVER_BIN is ${configured}, which does not exist`);
		return configured;
	}
	if (!existsSync(PROJECT_NATS_SERVER)) {
		throw new Error(
			"No NATS server in .nats-server/: `npm install` builds it with Go (1.26 or newer). " +
				"Re-run npm install and read its [nats-server] lines, or set NATS_SERVER_BIN to a nats-server binary.",
		);
	}
	return PROJECT_NATS_SERVER;
}
