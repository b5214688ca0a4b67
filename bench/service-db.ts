// The services' databases as the benchmark seeds and reads them: straight
// through the driver, never through a service, so none of it is counted in
// the services' figures.
import { type Db, MongoClient } from "mongodb";
import mongoose from "mongoose";
import type { ServiceName } from "../shared/config";
import { databaseNameFor } from "../shared/db.mixin";
import { append, CHUNK, createTimelines } from "../shared/timeline";

/** `mongoUrl` is a deployment's (`<server>/<base>`); `db("billing")` is its billing database. */
export async function withServiceDbs<T>(
	mongoUrl: string,
	work: (db: (service: ServiceName) => Db, client: MongoClient) => Promise<T>,
): Promise<T> {
	const client = await MongoClient.connect(mongoUrl);
	try {
		return await work(service => client.db(databaseNameFor(service, mongoUrl)), client);
	} finally {
		await client.close();
	}
}

/** The ids of an account's customers or transactions (a scan: the benchmark's own query, not measured). */
export function idsOf(mongoUrl: string, collection: "customers" | "transactions", accountId: number): Promise<number[]> {
	return withServiceDbs(mongoUrl, async db => {
		const docs = await db("billing")
			.collection(collection)
			.find({ accountId }, { projection: { _id: 1 } })
			.toArray();
		return docs.map(d => d._id as unknown as number);
	});
}

/**
 * Lists an account's customers other than `listed` (the service's own) in its
 * customer list (billing/lists/pages.ts's `c:<account>`), oldest id first, as the
 * service lists each new customer: the list scenario pages through them.
 */
export async function listClones(mongoUrl: string, accountId: number, listed: Set<number>): Promise<number> {
	const connection = await mongoose.createConnection(mongoUrl, { dbName: databaseNameFor("billing", mongoUrl) }).asPromise();
	try {
		const timelines = createTimelines(connection);
		const docs = await connection
			.collection("customers")
			.find({ accountId }, { projection: { _id: 1, subscriptionTimestamp: 1 } })
			.sort({ _id: 1 })
			.toArray();
		const fresh = docs.filter(d => !listed.has(d._id as unknown as number));
		for (let i = 0; i < fresh.length; i += CHUNK) {
			await append(
				timelines,
				`c:${accountId}`,
				fresh.slice(i, i + CHUNK).map(d => [d._id as unknown as number, (d.subscriptionTimestamp as Date).getTime()]),
			);
		}
		return fresh.length;
	} finally {
		await connection.close();
	}
}
