import type { EmbeddedDb } from "../../shared/embedded-db";
import { findCardDataAtRest } from "./card-data-scan";

export default async function globalTeardown(): Promise<void> {
	const db = (globalThis as { __testDb?: EmbeddedDb }).__testDb;
	try {
		const findings = await findCardDataAtRest(process.env.MONGO_URL ?? db!.url);
		if (findings.length) throw new Error(`Card data stored in plaintext after the test suite:\n${findings.join("\n")}`);
		console.log("\nCard data scan: no test card number and no CVC stored in any database.");
	} finally {
		await db?.stop();
	}
}
