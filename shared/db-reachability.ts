// Whether a service reaches its database, since when not, and why, for health
// and for one error-level log line when an outage lasts (not one per request).
import type { Logger } from "moleculer";

export interface DbOutage {
	/** When the service last stopped reaching its database (ISO 8601, UTC). */
	since: string;
	/** The last error, with server addresses taken out: health answers without a token. */
	lastError: string;
}

/** `connect ECONNREFUSED 10.0.0.5:27017` -> `connect ECONNREFUSED <database>`. */
export function describeDbError(error: unknown): string {
	const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
	return text
		.replace(/\[[0-9a-f:.]+\]:\d+|(?:[\w-]+\.)*[\w-]+:\d{2,5}\b/gi, "<database>")
		.replace(/ENOTFOUND \S+/g, "ENOTFOUND <database>")
		.slice(0, 200);
}

/**
 * The outage is logged by a timer that runs only while the database is unreachable: a process at rest wakes for
 * nothing (a timer per service each second cost more CPU at rest than the whole broker's heartbeats).
 */
export class DbReachability {
	private downSince: number | null = null;
	private lastError = "";
	private reported = false;
	private timer: NodeJS.Timeout | null = null;

	constructor(
		private readonly service: string,
		private readonly logger: Logger,
		private readonly reportAfterMs: number,
	) {}

	reached(): void {
		if (this.downSince === null) return;
		if (this.reported) {
			this.logger.warn(`${this.service} reaches its database again after ${this.seconds(Date.now())} s`);
		}
		this.downSince = null;
		this.reported = false;
		this.stop();
	}

	failed(error: unknown): void {
		this.lastError = describeDbError(error);
		this.downSince ??= Date.now();
		if (!this.reported && !this.timer) {
			const left = Math.max(0, this.downSince + this.reportAfterMs - Date.now());
			this.timer = setTimeout(() => {
				this.timer = null;
				this.check();
			}, left).unref();
		}
	}

	/** No timer left behind (the service stops). */
	stop(): void {
		if (this.timer) clearTimeout(this.timer);
		this.timer = null;
	}

	/** Logs an outage once, when it has lasted `reportAfterMs`. */
	check(now = Date.now()): void {
		if (this.downSince === null || this.reported || now - this.downSince < this.reportAfterMs) return;
		this.reported = true;
		this.logger.error(`${this.service} has not reached its database for ${this.seconds(now)} s: ${this.lastError}`);
	}

	outage(): DbOutage | null {
		return this.downSince === null ? null : { since: new Date(this.downSince).toISOString(), lastError: this.lastError };
	}

	private seconds(now: number): number {
		return Math.round((now - (this.downSince ?? now)) / 1000);
	}
}
