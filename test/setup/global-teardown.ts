import { rmSync } from "node:fs";
import type { EmbeddedDb } from "../../dev/embedded-db";
import { findCardDataAtRest } from "./card-data-scan";
import { findSecretsInLogs } from "./log-scan";
import { LOG_DIR_VARIABLE } from "./test-logger";

export default async function globalTeardown(): Promise<void> {
	const db = (globalThis as { __testDb?: EmbeddedDb }).__testDb;
	const logDir = process.env[LOG_DIR_VARIABLE];
	try {
		const findings = await findCardDataAtRest(process.env.MONGO_URL ?? db!.url);
		if (findings.length) throw new Error(`Card data stored in plaintext after the test suite:\n${findings.join("\n")}`);
		console.log("\nCard data scan: no test card number, no CVC and no API token or processor key stored in clear in any database.");
		const inLogs = logDir ? findSecretsInLogs(logDir) : [];
		// Kept for reading when something was found (or KEEP_TEST_LOGS=1); removed otherwise.
		if (inLogs.length) throw new Error(`Card data or secrets in the apps' logs (${logDir}):\n${inLogs.slice(0, 50).join("\n")}`);
		console.log("Log scan: no test card number, CVC or secret in the apps' logs.");
		if (logDir && process.env.KEEP_TEST_LOGS !== "1") rmSync(logDir, { recursive: true, force: true });
		else if (logDir) console.log(`Logs kept in ${logDir}`);
	} finally {
		await db?.stop();
	}
}
