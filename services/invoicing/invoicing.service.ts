// Invoices and credit notes (docs/invoices.md): issued from what billing
// hands over (invoicing.issue, an idempotent consumer keyed by the
// transaction's id), numbered without gaps per account, and read by the
// merchant (lists, JSON, PDFs), by the buyer (signed links) and by
// notifications (a receipt's PDF). It reads no other service's collections:
// billing sends what a document shows, accounts the seller and the products.
//
// billing.issue calls are routed by account (Moleculer's shard strategy): one
// node numbers an account's documents, one at a time, so no node loses a
// compare-and-set to another while the nodes stay the same.
import type { Context, ServiceBroker, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { IssueRequest } from "../../shared/contracts/invoicing";
import { dbMixin } from "../../shared/db.mixin";
import { createInvoicingDeps, type InvoicingDeps } from "./deps";
import { documentActions } from "./document-actions";
import { issueAll } from "./document-events";
import { createInvoicingModels, type InvoicingDb } from "./models";
import { schemas } from "./schemas";

interface Locals {
	db: InvoicingDb;
	deps: InvoicingDeps;
}

const RETRIES = "invoicing.numbering.retries";

/** Counts the compare-and-sets lost to another node on /metrics: none while the nodes stay the same. */
function numberingCounters(broker: ServiceBroker) {
	const enabled = broker.isMetricsEnabled();
	if (enabled && !broker.metrics.getMetric(RETRIES))
		broker.metrics.register({
			type: "counter",
			name: RETRIES,
			description: "Invoice numbers taken again after another node took the same one",
		});
	return { lostCompareAndSet: () => (enabled ? void broker.metrics.increment(RETRIES) : undefined) };
}

const InvoicingService: ServiceSchema<ServiceSettingSchema, Record<string, never>, Locals> = {
	name: "invoicing",
	mixins: [dbMixin("invoicing", createInvoicingModels)],

	actions: {
		issue: {
			params: schemas.issue,
			// An account's requests reach the node its id hashes to: its numbers are taken on one node.
			strategy: "Shard",
			strategyOptions: { shardKey: "accountId" },
			handler(ctx: Context<{ accountId: number; requests: IssueRequest[] }>) {
				return issueAll(this.deps, ctx.params.requests);
			},
		},
		...documentActions,
	},

	async started() {
		this.deps = createInvoicingDeps(this.broker, this.db, numberingCounters(this.broker));
	},
};

export default InvoicingService;
