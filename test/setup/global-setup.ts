// One in-memory database server for the whole run; each test file works in
// databases of its own (see app.ts), so files never see each other's data.
// The apps' logs go to files in a fresh folder (test-logger.ts), scanned at the end.
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startEmbeddedDb } from "../../dev/embedded-db";
import { applyCardSecrets } from "../../dev/local-secrets";
import { LOG_DIR_VARIABLE } from "./test-logger";

export default async function globalSetup(): Promise<void> {
	// One set of card keys for the run, as a deployment would configure them.
	applyCardSecrets({});
	process.env[LOG_DIR_VARIABLE] = mkdtempSync(path.join(os.tmpdir(), "payment-test-logs-"));
	if (process.env.MONGO_URL) return;
	const db = await startEmbeddedDb({ persistent: false, dataDir: os.tmpdir() });
	(globalThis as { __testDb?: typeof db }).__testDb = db;
	process.env.MONGO_URL = db.url;
	process.env.TEST_DB_KIND = db.kind;
}
