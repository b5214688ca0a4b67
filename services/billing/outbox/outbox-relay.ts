// Hands the events waiting in customers', transactions' and disputes' outboxes to the
// notifications service. An event leaves the outbox only after notifications
// has stored it, so a crash at any point re-sends rather than loses it;
// notifications dedupes on the event id. Every billing node relays: the
// records an action just wrote, by id, right after the action (kick with
// targets, relay-events.ts), and on a timer (a sweep, outbox-sweep.ts)
// whatever a crashed node or a failed relay left behind. The same sweep hands
// invoicing the requests a failed hand-over left listed (issue-requests.ts).
import type { WebhookEvent } from "../../../shared/contracts/notifications";
import type { Schedule } from "../../../shared/schedule";
import type { MetricsHandover } from "../entries/metrics-handover";
import type { BillingDb } from "../models";
import type { CustomerDoc } from "../records/customer";
import type { TransactionDoc } from "../records/transaction";
import type { IssueRequests } from "./issue-requests";
import { sweepOutbox } from "./outbox-sweep";
import { relayTargets } from "./relay-events";

export interface OutboxRelayDeps {
	db: BillingDb;
	outbox: Schedule<string>;
	/** Stores the events in notifications (notifications.enqueueAll); `resent`: a sweep's, which may have been stored before. */
	enqueueAll(events: WebhookEvent[], resent: boolean): Promise<unknown>;
	now: () => Date;
	logger: { warn(...args: unknown[]): void };
	/** Asks invoicing for the invoices and credit notes of transactions whose events are relayed (issue-requests.ts). */
	issueRequests?: IssueRequests;
	/** The metrics service: the entries events carry are applied there before the events leave the outbox (metrics.apply). */
	handover?: MetricsHandover;
}

/** The records an action wrote events on; the relay reads them by id instead of searching, or takes them as written. */
export interface RelayTargets {
	customers?: number[];
	transactions?: number[];
	disputes?: number[];
	/** Records as the action's own writes answered them (after its last write): not read again. */
	written?: { customers?: CustomerDoc[]; transactions?: TransactionDoc[] };
}

/** What an action's domain function answers, and the records it wrote events on, which its caller hands to the relay. */
export interface Relayed<A> {
	answer: A;
	toRelay: RelayTargets;
}

const SWEEP_INTERVAL_MS = 5000;

/** The records an action wrote events on, as listings name them. */
function listingsOf(toRelay: RelayTargets): string[] {
	return [
		...(toRelay.customers ?? []).map(id => `c${id}`),
		...(toRelay.transactions ?? []).map(id => `t${id}`),
		...(toRelay.disputes ?? []).map(id => `d${id}`),
		...(toRelay.written?.customers ?? []).map(doc => `c${doc._id}`),
		...(toRelay.written?.transactions ?? []).map(doc => `t${doc._id}`),
	];
}

export function createOutboxRelay(deps: OutboxRelayDeps) {
	let sweeping: Promise<void> | null = null;
	let sweepAgain = false;
	const relaying = new Set<Promise<void>>();
	/**
	 * The records this node's relays are handing over now (`c12`, `t34`, `d5`, as listings name them): the sweep
	 * leaves them to those relays, which under load may take longer than the sweep's delay, instead of relaying them a
	 * second time. A relay that fails lets them go, and the next sweep takes them.
	 */
	const inFlight = new Map<string, number>();
	let timer: NodeJS.Timeout | undefined;

	const paused = (err: unknown) => {
		// Notifications or the database is unavailable: the events wait in the outbox for the next sweep.
		deps.logger.warn("Outbox relay paused:", (err as Error).message);
	};

	/** One sweep at a time on this node; a sweep asked for while one runs runs again after it. */
	function sweep(): void {
		if (sweeping) {
			sweepAgain = true;
			return;
		}
		sweeping = (async () => {
			do {
				sweepAgain = false;
				await sweepOutbox({ ...deps, inFlight: (kind, docId) => inFlight.has(`${kind}${docId}`) }).catch(paused);
				deps.issueRequests?.sweep();
			} while (sweepAgain);
		})().finally(() => {
			sweeping = null;
		});
	}

	/** Relays the records an action just wrote, now and independently of other writes; without targets, sweeps. */
	function kick(toRelay?: RelayTargets): void {
		if (!toRelay) {
			sweep();
			return;
		}
		const docs = listingsOf(toRelay);
		for (const doc of docs) inFlight.set(doc, (inFlight.get(doc) ?? 0) + 1);
		const relay: Promise<void> = relayTargets(deps, toRelay)
			.then(() => undefined, paused)
			.finally(() => {
				relaying.delete(relay);
				for (const doc of docs) {
					const left = (inFlight.get(doc) ?? 1) - 1;
					if (left > 0) inFlight.set(doc, left);
					else inFlight.delete(doc);
				}
			});
		relaying.add(relay);
	}

	return {
		kick,
		start(): void {
			timer = setInterval(sweep, SWEEP_INTERVAL_MS);
			timer.unref();
			sweep();
		},
		async stop(): Promise<void> {
			clearInterval(timer);
			await Promise.all([sweeping, ...relaying]);
			await deps.issueRequests?.stop();
		},
	};
}

export type OutboxRelay = ReturnType<typeof createOutboxRelay>;
