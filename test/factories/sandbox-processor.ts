// The sandbox processor as billing runs it, on the test app's billing database
// (MONGO_URL, as startApp set it): what "the processor already did it" means
// in a test that builds the state a crash or an outage leaves behind.
import mongoose from "mongoose";
import type { PaymentProcessor } from "../../services/billing/processors/payment-processor";
import { createSandboxModels, createSandboxProcessor } from "../../services/billing/processors/sandbox-processor";
import { databaseNameFor } from "../../shared/db.mixin";

export async function openSandboxProcessor(): Promise<{ processor: PaymentProcessor; close(): Promise<void> }> {
	const url = process.env.MONGO_URL!;
	const connection = await mongoose
		.createConnection(url, { dbName: databaseNameFor("billing", url), autoIndex: false, autoCreate: false })
		.asPromise();
	const processor = createSandboxProcessor(createSandboxModels(connection), Buffer.from(process.env.VAULT_KEY!, "base64"));
	return { processor, close: () => connection.close() };
}
