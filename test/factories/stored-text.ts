// Every document of some services' databases, as text: where a key or a secret in clear would show.
import { MongoClient } from "mongodb";
import { databaseNameFor } from "../../shared/db.mixin";

export async function everythingStored(
	services: string[] = ["accounts", "payments", "gateway", "billing", "notifications"],
): Promise<string> {
	const url = process.env.MONGO_URL!;
	const client = await MongoClient.connect(url);
	try {
		const texts: string[] = [];
		for (const service of services) {
			const db = client.db(databaseNameFor(service, url));
			for (const { name } of await db.listCollections().toArray()) texts.push(JSON.stringify(await db.collection(name).find().toArray()));
		}
		return texts.join("\n");
	} finally {
		await client.close();
	}
}
