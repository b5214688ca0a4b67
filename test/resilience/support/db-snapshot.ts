// Every document of the app's databases (`<base>_<service>`, see
// shared/db.mixin.ts), hashed per collection, so a test can prove that a batch
// of requests changed nothing at all, and say which documents changed if it did.
import { createHash } from "node:crypto";
import { MongoClient } from "mongodb";

/** `<database>.<collection>` -> document id -> hash of the whole document. */
export type DbSnapshot = Map<string, Map<string, string>>;

export interface DbWatcher {
	snapshot(): Promise<DbSnapshot>;
	/** Waits until no outbox relay, webhook attempt or checkout to recover is listed: work the app still does on its own. */
	settled(timeoutMs?: number): Promise<void>;
	close(): Promise<void>;
}

/** Schedules whose listings the app works off by itself: within seconds, or the checkout recovery's grace period. */
const SELF_DRAINING = ["outbox_schedule", "webhook_attempt_schedule", "checkout_schedule"];

/**
 * A schedule's cursor moves on as time passes, and a slot emptied by the work
 * it listed lingers until the cursor passes it (shared/schedule.ts): neither is
 * a change a request made. The listings themselves are compared.
 */
function isTimeBookkeeping(doc: { _id: unknown; ids?: unknown[] }): boolean {
	return doc._id === "cursor" || (Array.isArray(doc.ids) && doc.ids.length === 0);
}

export async function watchDatabases(serverUrl: string, base: string): Promise<DbWatcher> {
	const client = await MongoClient.connect(serverUrl);
	return {
		async snapshot() {
			const result: DbSnapshot = new Map();
			const { databases } = await client.db().admin().listDatabases({ nameOnly: true });
			for (const { name } of databases.filter(d => d.name.startsWith(`${base}_`)).sort((a, b) => a.name.localeCompare(b.name))) {
				for (const { name: collection } of await client.db(name).listCollections({}, { nameOnly: true }).toArray()) {
					const docs = new Map<string, string>();
					for await (const doc of client.db(name).collection(collection).find()) {
						if (collection.endsWith("_schedule") && isTimeBookkeeping(doc)) continue;
						docs.set(JSON.stringify(doc._id), createHash("sha256").update(JSON.stringify(doc)).digest("hex"));
					}
					result.set(`${name}.${collection}`, docs);
				}
			}
			return result;
		},
		async settled(timeoutMs = 20_000) {
			const deadline = Date.now() + timeoutMs;
			for (;;) {
				const pending: string[] = [];
				const { databases } = await client.db().admin().listDatabases({ nameOnly: true });
				for (const { name } of databases.filter(d => d.name.startsWith(`${base}_`))) {
					for (const { name: collection } of await client.db(name).listCollections({}, { nameOnly: true }).toArray()) {
						if (!SELF_DRAINING.includes(collection)) continue;
						for await (const doc of client.db(name).collection(collection).find())
							if (!isTimeBookkeeping(doc)) pending.push(`${name}.${collection} ${JSON.stringify(doc)}`);
					}
				}
				if (pending.length === 0) return;
				if (Date.now() > deadline) throw new Error(`still pending after ${timeoutMs} ms:\n${pending.join("\n")}`);
				await new Promise(resolve => setTimeout(resolve, 200));
			}
		},
		close: () => client.close(),
	};
}

/** What differs between two snapshots, one line per document (empty when nothing does). */
export function differences(before: DbSnapshot, after: DbSnapshot): string[] {
	const lines: string[] = [];
	for (const name of new Set([...before.keys(), ...after.keys()])) {
		const a = before.get(name) ?? new Map<string, string>();
		const b = after.get(name) ?? new Map<string, string>();
		// A collection created and left empty (an insert undone) holds nothing.
		if (!before.has(name) && b.size > 0) lines.push(`${name}: collection created`);
		for (const [id, hash] of b) {
			if (!a.has(id)) lines.push(`${name} ${id}: added`);
			else if (a.get(id) !== hash) lines.push(`${name} ${id}: changed`);
		}
		for (const id of a.keys()) if (!b.has(id)) lines.push(`${name} ${id}: removed`);
	}
	return lines;
}
