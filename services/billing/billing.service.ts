// Customers (subscriptions), transactions and the payment processors. The
// checkout service calls the checkout steps; the gateway calls the reads.
import type { ActionSchema, Context, Service, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { domainAction, errorAsValue } from "../../shared/action";
import { config } from "../../shared/config";
import { dbMixin } from "../../shared/db.mixin";
import {
	abandonSubscription,
	firstPayment,
	openSubscription,
	verifyCard,
} from "./checkout-payments";
import type { BillingDeps } from "./deps";
import { type BillingDb, createBillingModels } from "./models";
import { createSandboxModels, createSandboxProcessor, listSandboxOperations, type SandboxModels } from "./processors/sandbox-processor";
import { createOutboxRelay, type OutboxRelay } from "./outbox-relay";
import { getCustomer, getTransaction, listCustomers, listTransactions } from "./reads";
import { refundTransaction } from "./refund-ledger";
import { claimRenewal, releaseRenewal } from "./renewal-lease";
import { unsubscribe } from "./unsubscribe";
import { schemas } from "./schemas";

interface Locals {
	db: BillingDb & { sandbox: SandboxModels };
	deps: BillingDeps;
	relay: OutboxRelay;
}

/** Actions that write outbox events kick the relay, so webhooks go out at once. */
function thenRelay<P>(params: object, fn: (deps: BillingDeps, input: P) => Promise<unknown>): ActionSchema<Service & Locals> {
	return {
		params: params as ActionSchema["params"],
		async handler(ctx: Context<P>) {
			const result = await fn(this.deps, ctx.params);
			this.relay.kick();
			return errorAsValue(result as string);
		},
	};
}

const BillingService: ServiceSchema<ServiceSettingSchema, Record<string, never>, Locals> = {
	name: "billing",
	mixins: [dbMixin("billing", connection => ({ ...createBillingModels(connection), sandbox: createSandboxModels(connection) }))],

	actions: {
		verifyCard: domainAction(schemas.verifyCard, verifyCard, errorAsValue),
		openSubscription: domainAction(schemas.openSubscription, openSubscription, errorAsValue),
		abandonSubscription: domainAction(schemas.abandonSubscription, abandonSubscription, errorAsValue),
		firstPayment: thenRelay(schemas.firstPayment, firstPayment),
		refundTransaction: thenRelay(schemas.refundTransaction, refundTransaction),
		unsubscribe: thenRelay(schemas.unsubscribe, unsubscribe),
		// The renewal engine's claim and release, as an action so any billing node (or ops) can take part.
		claimRenewal: {
			params: schemas.claimRenewal,
			async handler(ctx: Context<{ customerId: number; owner: string; at: string; leaseMs: number }>) {
				const claimed = await claimRenewal(this.deps, { ...ctx.params, at: new Date(ctx.params.at) });
				return { claimed: claimed !== null };
			},
		},
		releaseRenewal: domainAction(schemas.releaseRenewal, releaseRenewal),
		getCustomer: domainAction(schemas.getById, getCustomer),
		getTransaction: domainAction(schemas.getById, getTransaction),
		listCustomers: domainAction(schemas.listCustomers, listCustomers),
		listTransactions: domainAction(schemas.listTransactions, listTransactions),
		sandboxOperations: {
			params: schemas.sandboxOperations,
			handler(ctx: Context<Parameters<typeof listSandboxOperations>[1]>) {
				return listSandboxOperations(this.db.sandbox, ctx.params);
			},
		},
	},

	async started() {
		const { vaultKey } = config();
		if (!vaultKey) throw new Error("VAULT_KEY is not set: the billing service needs it to seal card numbers (npm start generates one)");
		const sandbox = createSandboxProcessor(this.db.sandbox, Buffer.from(vaultKey, "base64"));
		this.deps = {
			db: this.db,
			// Production accounts need a real processor adapter; none is configured yet.
			processorFor: environment => (environment === "sandbox" ? sandbox : null),
			now: () => new Date(),
		};
		this.relay = createOutboxRelay({
			db: this.db,
			enqueue: event => this.broker.call("notifications.enqueue", event),
			logger: this.logger,
		});
		this.relay.start();
	},

	async stopped() {
		await this.relay?.stop();
	},
};

export default BillingService;
