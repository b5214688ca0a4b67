// The services' databases as the benchmark seeds and reads them: straight
// through the driver, never through a service, so none of it is counted in
// the services' figures.
import { type Db, MongoClient } from "mongodb";
import type { ServiceName } from "../shared/config";
import { databaseNameFor } from "../shared/db.mixin";

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
