// This node's renewal cycles: on the cron (RENEWAL_CRON) and when asked
// (renewals/renewal-runs.ts). Every billing node runs the cycle; the leases
// share the work (renewal-lease.ts).
import { Cron } from "croner";
import type { Logger, ServiceBroker } from "moleculer";
import { call } from "../../../shared/call";
import { config } from "../../../shared/config";
import type { RenewalTerms } from "../../../shared/contracts/accounts";
import type { BillingDeps } from "../deps";
import { createCapTracker } from "../renewals/mid-caps";
import { type CycleReport, type RenewalDeps, runRenewalCycle } from "../renewals/renewal-cycle";
import { resumeDue } from "../subscriptions/pause";
import { endScheduled } from "../subscriptions/period-end-cancel";

export interface CycleRunnerOptions {
	broker: ServiceBroker;
	deps: BillingDeps;
	/** Aborted when the node drains: a cycle claims no new batch. */
	signal: AbortSignal;
	logger: Logger;
}

export type RunCycle = (options: { at: Date; from?: Date; readFrom?: Date; accountId?: number }) => Promise<CycleReport>;

/** This node's place among the billing nodes it knows of: the cycle renews its own share first. */
function cycleShare(broker: ServiceBroker): { index: number; count: number } {
	const services = broker.registry.getServiceList({ onlyAvailable: true, withActions: false }) as { name: string; nodeID: string }[];
	const nodes = [...new Set(services.filter(s => s.name === "billing").map(s => s.nodeID))].sort();
	const index = nodes.indexOf(broker.nodeID);
	return index < 0 ? { index: 0, count: 1 } : { index, count: nodes.length };
}

/** The deps of one cycle: each product's renewal terms are read once per cycle. */
function cycleDeps(broker: ServiceBroker, deps: BillingDeps): RenewalDeps {
	const terms = new Map<string, Promise<RenewalTerms | null>>();
	return {
		...deps,
		caps: createCapTracker(deps),
		resumeDue,
		endScheduled,
		termsOf: (accountId, productId) => {
			const key = `${accountId}:${productId}`;
			if (!terms.has(key)) terms.set(key, call(broker, "accounts.renewalTerms", { accountId, productId }));
			return terms.get(key)!;
		},
	};
}

export function createCycleRunner({ broker, deps, signal, logger }: CycleRunnerOptions): RunCycle {
	return async options => {
		const report = await runRenewalCycle(cycleDeps(broker, deps), {
			leaseMs: config().renewalLeaseMs,
			...options,
			owner: broker.nodeID,
			signal,
			share: cycleShare(broker),
		});
		if (report.charged + report.declined + report.suspended + report.ended > 0) logger.info("Renewal cycle:", report);
		return report;
	};
}

const NOTHING_RENEWED: CycleReport = { charged: 0, declined: 0, suspended: 0, skipped: 0, cardExpiryWarnings: 0, resumed: 0, ended: 0 };

/** The cron's cycle, then the sandbox notices due by its time (those of the charges it just made included). */
export function startRenewalCron(runCycle: RunCycle, applySandboxNotices: (until: Date) => Promise<void>, logger: Logger) {
	let cycle: Promise<CycleReport> | null = null;
	const cron = new Cron(config().renewalCron, { timezone: config().timeZone, protect: true }, async () => {
		const at = new Date();
		cycle = runCycle({ at }).catch(err => {
			logger.error("Renewal cycle failed:", (err as Error).message);
			return NOTHING_RENEWED;
		});
		await cycle;
		cycle = null;
		await applySandboxNotices(at).catch(err => logger.warn("Sandbox notices wait for the next cycle:", (err as Error).message));
	});
	return {
		stop: () => cron.stop(),
		/** A cycle in progress finishes the renewals it holds. */
		finished: async () => {
			await cycle;
		},
	};
}
