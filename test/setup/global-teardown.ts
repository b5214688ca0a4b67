import type { EmbeddedDb } from "../../shared/embedded-db";

export default async function globalTeardown(): Promise<void> {
	await (globalThis as { __testDb?: EmbeddedDb }).__testDb?.stop();
}
