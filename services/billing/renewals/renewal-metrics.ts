// What a renewal batch's customers count in the metrics (docs/metrics.md): a
// first charge after a trial makes a subscriber, a renewal may move MRR (a
// coupon's last period used, a change applied at the period's end, a new
// price), a retry on another MID moves the customer between MIDs. Each that
// moved gets a METRICS event carrying its entry, written in the batch's one
// bulk update with its new `counted`; every customer gets its `counted`.

import { type CountedFields, countUpdate } from "../entries/customer-entry";
import type { Contribution, MetricsProduct } from "../entries/subscription-state";
import { outboxEvent, scheduleEvents } from "../outbox/outbox";
import type { CustomerDoc } from "../records/customer";
import type { OutboxEvent } from "../records/outbox-event";
import { METRICS_ONLY } from "../records/outbox-event";
import type { RenewalDeps } from "./renewal-batch";

export interface RenewalCounted {
	customer: CustomerDoc;
	/** The fields the batch sets on it while it is ACTIVE. */
	fields: CountedFields;
	product: MetricsProduct;
	/** When it was charged, in the account's time. */
	at: Date;
}

/** Per customer, its `counted` to set and the METRICS event to push (none when nothing moved); the events listed first. */
export async function renewalCounts(
	deps: RenewalDeps,
	moving: RenewalCounted[],
): Promise<Map<number, { counted: Contribution; event: OutboxEvent | null }>> {
	const counts = new Map<number, { counted: Contribution; event: OutboxEvent | null }>();
	for (const { customer, fields, product, at } of moving) {
		const { counted, entry } = await countUpdate(deps, customer, fields, { product, at });
		counts.set(customer._id, { counted, event: entry ? outboxEvent(deps, METRICS_ONLY, { metrics: entry }) : null });
	}
	const events = [...counts].flatMap(([docId, { event }]) => (event ? [{ kind: "c" as const, docId, event }] : []));
	if (events.length) await scheduleEvents(deps, events);
	return counts;
}
