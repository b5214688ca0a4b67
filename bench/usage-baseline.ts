// The limit usage ingestion is compared with (the usage scenario, bench/usage.ts): a bare Node `http` server that
// answers POST /api/usage with the writes a batch of events needs, through the raw `mongodb` driver, and nothing else:
//   1. the events, insertMany (ordered: false) into usage_events, keyed `<account>:<the merchant's id>` as ours are,
//      each with the value or the distinct value's hash its meter counts (the same functions as ours:
//      services/usage/event-checks.ts); a taken key is a duplicate and counts nothing;
//   2. the distinct values of the unique_count events stored, insertMany (ordered: false) into usage_uniques, keyed
//      `<aggregate>:<hash>` as ours are; a taken key was counted before;
//   3. one bulkWrite of upserts, one per (customer, meter, period) aggregate: $inc count, sum and the new distinct
//      values, $max max and latest (services/usage/batch-apply.ts's keys and `latest`).
// The answer is ours: counts and one result per event. Not part of the limit, ours to pay for: the framework (HTTP
// routing, the token's check, the broker, validation of each event), the customers' periods read (every event's
// period is 0 here), the batch's listing and removal (a crashed node's batch finished by another), the customers'
// event lists (`ue:<customer>` timelines, GET /api/customer/{id}/usage-events) and the aggregates' `applied` list.
//
// USAGE_BASELINE_LISTS=1 (a diagnostic, not the baseline): the customers' event lists too, through our own code
// (shared/timeline.ts's appendAll, as services/usage/batch-apply.ts calls it), between the distinct values and the
// aggregates: what the lists alone cost on the raw path (bench/README.md, "Usage ingestion").
//
//   MONGO_URL=mongodb://127.0.0.1:27017/bench_usage_baseline PORT=3101 npx tsx bench/usage-baseline.ts
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { type AnyBulkWriteOperation, type Collection, MongoBulkWriteError, MongoClient } from "mongodb";
import mongoose from "mongoose";
import { aggregateKey, latestOf } from "../services/usage/batch-apply";
import { type Contribution, contributionOf, type EventInput } from "../services/usage/event-checks";
import type { MeterDoc } from "../services/usage/models";
import type { Aggregation } from "../shared/contracts/usage";
import { appendAll, createTimelines, type Timelines } from "../shared/timeline";
import { readBody, serveBare } from "./bare-server";

/** The benchmark's meters (bench/usage.ts makes the same ones on the admin API). */
export const BENCH_METERS: { code: string; name: string; aggregation: Aggregation; property?: string }[] = [
	{ code: "calls", name: "API calls", aggregation: "count" },
	{ code: "tokens", name: "Tokens", aggregation: "sum", property: "tokens" },
	{ code: "users", name: "Active users", aggregation: "unique_count", property: "user" },
];

/** Every event counts in period 0 here: the customers' first period, which the benchmark never leaves. */
const PERIOD = 0;
const DUPLICATE_KEY = 11000;

interface Stored {
	index: number;
	id: string;
	doc: { _id: string; customerId: number; meter: string; timestamp: Date } & Contribution & Record<string, unknown>;
}

/** The indexes of the documents insertMany refused as taken keys; anything else is thrown. */
async function insertRefusing(collection: Collection, docs: object[]): Promise<Set<number>> {
	if (!docs.length) return new Set();
	try {
		await collection.insertMany(docs as never[], { ordered: false });
		return new Set();
	} catch (err) {
		if (!(err instanceof MongoBulkWriteError)) throw err;
		const errors = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
		for (const e of errors) if (e.code !== DUPLICATE_KEY) throw err;
		return new Set(errors.map(e => e.index));
	}
}

function createHandler(
	collections: { events: Collection; uniques: Collection; aggregates: Collection },
	accountId: number,
	lists: Timelines | null,
) {
	const meters = new Map<string, MeterDoc>(
		BENCH_METERS.map(m => [
			m.code,
			{
				_id: `${accountId}:${m.code}`,
				accountId,
				code: m.code,
				name: m.name,
				aggregation: m.aggregation,
				property: m.property ?? null,
				filters: {},
				createdAt: new Date(),
			},
		]),
	);
	return async (events: EventInput[]) => {
		const batch = randomUUID();
		const receivedAt = new Date();
		const results: { id: string; status: "accepted" | "duplicate" | "refused"; reason?: string }[] = new Array(events.length);
		const stored: Stored[] = [];
		events.forEach((event, index) => {
			const meter = meters.get(event.meter);
			const properties = event.properties ?? {};
			const contribution = meter ? contributionOf(meter, properties) : "UNKNOWN_METER";
			if (typeof contribution === "string") {
				results[index] = { id: event.id, status: "refused", reason: contribution };
				return;
			}
			stored.push({
				index,
				id: event.id,
				doc: {
					_id: `${accountId}:${event.id}`,
					accountId,
					customerId: event.customerId,
					meter: event.meter,
					timestamp: new Date(event.timestamp),
					properties,
					period: PERIOD,
					...contribution,
					late: false,
					batch,
					status: "counted",
					receivedAt,
				},
			});
		});
		const taken = await insertRefusing(
			collections.events,
			stored.map(s => s.doc),
		);
		const fresh = stored.filter((s, i) => {
			results[s.index] = { id: s.id, status: taken.has(i) ? "duplicate" : "accepted" };
			return !taken.has(i);
		});
		// The distinct values first: an aggregate's `unique` grows by those this batch is the first to store.
		const uniqueDocs = new Map<string, { _id: string; batch: string }>();
		for (const { doc } of fresh) {
			if (!doc.unique) continue;
			const id = `${aggregateKey(doc.customerId, doc.meter, PERIOD)}:${doc.unique}`;
			uniqueDocs.set(id, { _id: id, batch });
		}
		const uniques = [...uniqueDocs.values()];
		const seen = await insertRefusing(collections.uniques, uniques);
		const newUniques = new Map<string, number>();
		uniques.forEach((u, i) => {
			if (seen.has(i)) return;
			const aggregate = u._id.slice(0, u._id.lastIndexOf(":"));
			newUniques.set(aggregate, (newUniques.get(aggregate) ?? 0) + 1);
		});
		if (lists)
			await appendAll(
				lists,
				fresh.map(({ doc }) => ({ key: `ue:${doc.customerId}`, ref: [doc._id, doc.timestamp.getTime()] as [string, number] })),
			);
		const groups = new Map<string, { customerId: number; meter: string; count: number; sum: number; max: number; latest: string }>();
		for (const { doc } of fresh) {
			const id = aggregateKey(doc.customerId, doc.meter, PERIOD);
			let group = groups.get(id);
			if (!group) groups.set(id, (group = { customerId: doc.customerId, meter: doc.meter, count: 0, sum: 0, max: 0, latest: "" }));
			group.count++;
			group.sum += doc.value;
			group.max = Math.max(group.max, doc.value);
			const latest = latestOf(doc.timestamp, doc.value);
			if (latest > group.latest) group.latest = latest;
		}
		const operations: AnyBulkWriteOperation[] = [...groups].map(([id, g]) => ({
			updateOne: {
				filter: { _id: id as never },
				update: {
					$inc: { count: g.count, sum: g.sum, unique: newUniques.get(id) ?? 0 },
					$max: { max: g.max, latest: g.latest },
					$setOnInsert: { accountId, customerId: g.customerId, meter: g.meter, period: PERIOD, sealed: false },
				},
				upsert: true,
			},
		}));
		if (operations.length) await collections.aggregates.bulkWrite(operations, { ordered: true });
		return {
			accepted: results.filter(r => r.status === "accepted").length,
			duplicates: results.filter(r => r.status === "duplicate").length,
			refused: results.filter(r => r.status === "refused").length,
			results,
		};
	};
}

async function main(): Promise<void> {
	const url = process.env.MONGO_URL;
	if (!url) throw new Error("MONGO_URL must be set");
	const client = await MongoClient.connect(url);
	const db = client.db();
	const ingest = createHandler(
		{ events: db.collection("usage_events"), uniques: db.collection("usage_uniques"), aggregates: db.collection("usage_aggregates") },
		Number(process.env.USAGE_ACCOUNT_ID ?? 1),
		process.env.USAGE_BASELINE_LISTS === "1" ? createTimelines(await mongoose.createConnection(url).asPromise()) : null,
	);
	const handle = async (req: IncomingMessage, res: ServerResponse) => {
		if (req.method !== "POST" || req.url !== "/api/usage") {
			res.writeHead(404).end();
			return;
		}
		const body = JSON.parse(await readBody(req)) as { events: EventInput[] };
		res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(await ingest(body.events)));
	};
	serveBare("usage baseline", Number(process.env.PORT ?? 3101), handle, () => client.close());
}

if (require.main === module)
	main().catch(err => {
		console.error(err instanceof Error ? err.message : err);
		process.exit(1);
	});
