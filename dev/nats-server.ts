// Which NATS server the project runs (tests, `npm run cluster`, the benchmark):
// NATS_SERVER_BIN when set, otherwise the one `npm install` built into
// .nats-server/ (dev/install/nats-server.mjs). Never one from PATH, so
// that a green run proves what `npm install` provides on a fresh machine.
import path from "node:path";
import { projectRoot } from "../shared/paths";
import { projectBinary } from "./project-binary";

const PROJECT_NATS_SERVER = path.join(projectRoot, ".nats-server", "nats-server");

/** The NATS server binary to run; throws how to get one when there is none. */
export function natsServerBin(env: NodeJS.ProcessEnv = process.env): string {
	return projectBinary(env, {
		envVar: "NATS_SERVER_BIN",
		file: PROJECT_NATS_SERVER,
		missing:
			"No NATS server in .nats-server/: `npm install` builds it with Go (1.26 or newer). " +
			"Re-run npm install and read its [nats-server] lines, or set NATS_SERVER_BIN to a nats-server binary.",
	});
}
