// The servers `npm install` builds into the project (dev/install/): the binary
// an environment variable names when it is set, otherwise the project's own.
// Never one from PATH, so that a green run proves what npm install provides.
import { existsSync } from "node:fs";

export interface ProjectBinary {
	/** The variable that names another build, e.g. NATS_SERVER_BIN. */
	envVar: string;
	/** The project's own build. */
	file: string;
	/** What to say when there is none: how to get one. */
	missing: string;
}

/** The binary to run; throws how to get one when there is none. */
export function projectBinary(env: NodeJS.ProcessEnv, { envVar, file, missing }: ProjectBinary): string {
	const configured = env[envVar];
	if (configured) {
		if (!existsSync(configured)) throw new Error(`${envVar} is ${configured}, which does not exist`);
		return configured;
	}
	if (!existsSync(file)) throw new Error(missing);
	return file;
}
