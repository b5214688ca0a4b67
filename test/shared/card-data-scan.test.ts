// The after-suite scan (test/setup/card-data-scan.ts) must be able to fail.
import { MongoClient } from "mongodb";
import { uniqueDatabaseName } from "../setup/app";
import { findCardDataAtRest } from "../setup/card-data-scan";

test("When a card number, a CVC field or a processor key is stored somewhere, then the scan reports where", async () => {
	// Arrange: plant both in a database of this test's own.
	const client = await MongoClient.connect(process.env.MONGO_URL!);
	const name = uniqueDatabaseName();
	try {
		await client
			.db(name)
			.collection("leaky")
			.insertOne({ _id: "x" as never, note: "card 4242424242424242", cvc: "123", processor: { secretKey: "sk_live_51Hx0Leaked" } });

		// Act
		const findings = (await findCardDataAtRest(process.env.MONGO_URL!)).filter(f => f.startsWith(name));

		// Assert
		expect(findings).toEqual([
			`${name}.leaky "x": card number 424242…`,
			`${name}.leaky "x": a CVC field`,
			`${name}.leaky "x": an API token or processor key in clear`,
		]);
	} finally {
		await client.db(name).dropDatabase();
		await client.close();
	}
});
