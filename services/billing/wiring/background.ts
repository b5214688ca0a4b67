// What a billing node runs besides its actions: the outbox relay (with
// invoicing's requests), the recovery sweeps, the renewal cron and the sandbox's notices. Started once
// the node's database is open; stopped in an order that lets work in progress
// finish: a sweep, then a cycle, then the relay that sends what they wrote.

import type { Logger, ServiceBroker } from "moleculer";
import { call } from "../../../shared/call";
import { type BackfillOptions, type BackfillReport, backfillMetrics } from "../backfill/metrics-backfill";
import type { BillingDeps } from "../deps";
import { applySandboxNotices } from "../disputes/sandbox-notices";
import { metricsHandover } from "../entries/metrics-handover";
import type { BillingDb } from "../models";
import { createIssueRequestSchedule, createIssueRequests, issueThrough } from "../outbox/issue-requests";
import { createOutboxRelay, type OutboxRelay } from "../outbox/outbox-relay";
import type { RecoveryReport } from "../refunds/refund-recovery";
import type { RenewalRuns } from "../renewals/renewal-runs";
import { createBillingDeps } from "./deps";
import { createCycleRunner, startRenewalCron } from "./renewal-cycles";
import { createSweeps } from "./sweeps";

export interface Background extends RenewalRuns {
	deps: BillingDeps;
	relay: OutboxRelay;
	recoverRefunds(): Promise<RecoveryReport>;
	/** Ops: count what existed before the metrics (backfill/metrics-backfill.ts); what it writes is relayed page by page. */
	backfillMetrics(options: Pick<BackfillOptions, "pages" | "pageSize">): Promise<BackfillReport>;
	/** The node drains (SIGTERM): the cron stops, and cycles and sweeps claim nothing new. */
	drain(): void;
	stop(): Promise<void>;
}

/** Applies the sandbox's disputes and fraud warnings due by `until`; their webhooks go out at once. */
function sandboxNoticesOf(deps: BillingDeps, logger: Logger) {
	return async (until: Date, accountId?: number): Promise<void> => {
		const report = await applySandboxNotices(deps, {
			until,
			accountId,
			onError: (noticeId, err) => logger.warn(`Sandbox notice ${noticeId} is applied again next time:`, err.message),
		});
		deps.relay(report.toRelay);
		if (report.applied + report.failed > 0)
			logger.info("Sandbox disputes and fraud warnings:", { applied: report.applied, failed: report.failed });
	};
}

/** How long a clock run waits for a billing node to hear it moved: one that is alive answers in milliseconds. */
const HEAR_TIMEOUT_MS = 2000;

/**
 * Tells every other billing node, and every metrics and usage node, that an account's test clock moved, and waits for their
 * answers: once a clock run answers, no node dates or reads anything of the account before it. A node that does not
 * answer reads the clock again when it restarts (a metrics node asks billing.clockOf).
 */
async function tellBillingNodes(broker: ServiceBroker, moved: { accountId: number; at: string }, logger: Logger): Promise<void> {
	const services = broker.registry.getServiceList({ onlyAvailable: true, withActions: false }) as { name: string; nodeID: string }[];
	const others = (name: "billing" | "metrics" | "usage") => [
		...new Set(services.filter(s => s.name === name && (name !== "billing" || s.nodeID !== broker.nodeID)).map(s => s.nodeID)),
	];
	const tell = (action: "billing.clockMoved" | "metrics.clockMoved" | "usage.clockMoved", nodeID: string) =>
		call(broker, action, moved, { nodeID, retries: 0, timeout: HEAR_TIMEOUT_MS }).catch(err =>
			logger.warn(`Node ${nodeID} (${action}) did not hear that account ${moved.accountId}'s clock moved:`, (err as Error).message),
		);
	await Promise.all([
		...others("billing").map(nodeID => tell("billing.clockMoved", nodeID)),
		...others("metrics").map(nodeID => tell("metrics.clockMoved", nodeID)),
		...others("usage").map(nodeID => tell("usage.clockMoved", nodeID)),
	]);
}

export async function startBackground(broker: ServiceBroker, db: BillingDb, logger: Logger): Promise<Background> {
	const draining = new AbortController();
	const deps = createBillingDeps(broker, db, targets => relay.kick(targets));
	// Each schedule starts at the first node's first start (a cursor at now, if there is none), so the first read of a
	// fresh database is by key rather than a look back over empty slots; nothing is scheduled before a node starts.
	const now = deps.now();
	const requests = createIssueRequestSchedule(db);
	const schedules = [deps.renewals, deps.cardExpiry, deps.outbox, deps.checkouts, deps.resumes, requests];
	await Promise.all(schedules.map(schedule => schedule.initialize(now)));
	const relay = createOutboxRelay({
		...deps,
		enqueueAll: (events, resent) => call(broker, "notifications.enqueueAll", { events, resent }),
		issueRequests: createIssueRequests({ db, requests, now: deps.now, issue: issueThrough(broker), logger }),
		handover: metricsHandover(params => call(broker, "metrics.apply", params)),
		logger,
	});
	relay.start();
	const sweeps = createSweeps({ deps, owner: broker.nodeID, signal: draining.signal, logger });
	sweeps.start();
	const runCycle = createCycleRunner({ broker, deps, signal: draining.signal, logger });
	const sandboxNotices = sandboxNoticesOf(deps, logger);
	const cron = startRenewalCron(runCycle, sandboxNotices, logger);
	return {
		deps,
		relay,
		runCycle,
		applySandboxNotices: sandboxNotices,
		environmentOf: async accountId => (await call(broker, "accounts.get", { accountId })).environment,
		owner: broker.nodeID,
		tellBillingNodes: (accountId, at) => tellBillingNodes(broker, { accountId, at: at.toISOString() }, logger),
		recoverRefunds: sweeps.recoverRefunds,
		backfillMetrics: options => backfillMetrics(deps, { ...options, onPage: toRelay => deps.relay(toRelay) }),
		drain() {
			cron.stop();
			draining.abort();
		},
		async stop() {
			sweeps.stopTimer();
			cron.stop();
			draining.abort();
			await sweeps.finished();
			await cron.finished();
			await relay.stop();
		},
	};
}
