// After the whole suite: no test card number may be stored in plaintext
// anywhere on the test database server, no document may hold a CVC, and no
// API token or processor key (sk_…, rk_…, Adyen's AQE…) may be stored in clear.
import { MongoClient } from "mongodb";
import { CARDS } from "../factories/checkout";

const EXTRA_NUMBERS = ["4242424242424241", "6011111111111117"];
/** Our API tokens and a MID's Stripe key share this shape, an Adyen API key has the other: all are kept only hashed or sealed. */
const KEY = /\b(sk|rk)_(test|live)_[A-Za-z0-9_-]{8,}|\bAQE[A-Za-z0-9+/=_-]{40,}/;

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
					if (KEY.test(text)) findings.push(`${where}: an API token or processor key in clear`);
				}
			}
		}
	} finally {
		await client.close();
	}
	return findings;
}
