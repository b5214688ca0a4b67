// One in-memory database server for the whole run; each test file works in
// databases of its own (see app.ts), so files never see each other's data.
// The apps' logs go to files in a fresh folder (test-logger.ts), scanned at the end.
// Nothing reaches outside the machine (loopback-only.js): this process, jest's
// workers and every Node process the tests start connect to loopback only.
import "./loopback-only.js";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startEmbeddedDb } from "../../dev/embedded-db";
import { applyCardSecrets } from "../../dev/local-secrets";
import { LOG_DIR_VARIABLE } from "./test-logger";

/** Preloaded into every Node process started from here on: jest's workers and their children inherit NODE_OPTIONS. */
export const LOOPBACK_ONLY_PRELOAD = `--require ${path.join(__dirname, "loopback-only.js")}`;

export default async function globalSetup(): Promise<void> {
	if (!process.env.NODE_OPTIONS?.includes(LOOPBACK_ONLY_PRELOAD)) {
		process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, LOOPBACK_ONLY_PRELOAD].filter(Boolean).join(" ");
	}
	// One set of card keys for the run, as a deployment would configure them.
	applyCardSecrets({});
	process.env[LOG_DIR_VARIABLE] = mkdtempSync(path.join(os.tmpdir(), "payment-test-logs-"));
	if (process.env.MONGO_URL) return;
	const db = await startEmbeddedDb({ persistent: false, dataDir: os.tmpdir() });
	(globalThis as { __testDb?: typeof db }).__testDb = db;
	process.env.MONGO_URL = db.url;
	process.env.TEST_DB_KIND = db.kind;
}
