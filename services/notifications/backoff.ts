// When a failed delivery is tried again, and until when: exponential backoff
// with full jitter (so a receiver coming back is not hit by every event at
// once), inside a retry window that starts at the event.
import type { Environment } from "../../shared/contracts/accounts";
import type { DeliverySettings } from "./deps";

export const MAX_RETRY_DELAY_MS = 60 * 60 * 1000;

/** Uniform in [0, min(1 h, base * 2^(failures - 1))). */
export function retryDelayMs(failures: number, baseMs: number, random: () => number = Math.random): number {
	const ceiling = Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** Math.min(Math.max(failures - 1, 0), 30));
	return Math.floor(random() * ceiling);
}

/** After this instant a failed attempt makes the delivery DEAD. Unknown environment: the longer window. */
export function retryWindowEnd(windowFrom: Date, environment: Environment | null, settings: DeliverySettings): Date {
	const hours =
		environment === "sandbox"
			? settings.sandboxRetryHours
			: environment === "production"
				? settings.retryHours
				: Math.max(settings.retryHours, settings.sandboxRetryHours);
	return new Date(windowFrom.getTime() + hours * 60 * 60 * 1000);
}
