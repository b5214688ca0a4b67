// After the whole suite: no test card number may be stored in plaintext
// anywhere on the test database server, and no document may hold a CVC.
import { MongoClient } from "mongodb";
import { CARDS } from "../factories/checkout";

const EXTRA_NUMBERS = ["4242424242424241", "6011111111111117"];

export async function findCardDataAtRest(url: string): Promise<string[]> {
	const numbers = [...Object.values(CARDS), ...EXTRA_NUMBERS];
	const client = await MongoClient.connect(url);
	const findings: string[] = [];
	try {
		const { databases } = await client.db().admin().listDatabases();
		for (const { name } of databases) {
			for (const { name: collection } of await client.db(name).listCollections().toArray()) {
				for await (const doc of client.db(name).collection(collection).find()) {
					const text = JSON.stringify(doc);
					const where = `${name}.${collection} ${JSON.stringify(doc._id)}`;
					for (const number of numbers) if (text.includes(number)) findings.push(`${where}: card number ${number.slice(0, 6)}…`);
					if (/"(cvc|cvv|cvn|cid|securityCode)"\s*:/i.test(text)) findings.push(`${where}: a CVC field`);
				}
			}
		}
	} finally {
		await client.close();
	}
	return findings;
}
