// A processor call retried a few times on an error, with the same idempotency key, so a retry never moves money twice.
import { sleep } from "./poll";

/** Processor errors are retried with the same idempotency key, so a retry never charges twice. */
const PROCESSOR_RETRY_DELAYS_MS = [50, 250];

/** `null` (nothing recorded for a lookup) is an answer too, and is not retried. */
export async function withRetries<T extends { status: string } | null>(call: () => Promise<T>): Promise<T> {
	let outcome = await call();
	for (const delay of PROCESSOR_RETRY_DELAYS_MS) {
		if (outcome?.status !== "ERROR") break;
		await sleep(delay);
		outcome = await call();
	}
	return outcome;
}
