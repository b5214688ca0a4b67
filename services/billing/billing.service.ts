// Customers (subscriptions), transactions and the payment processors. The
// checkout service calls the checkout steps; the gateway calls the reads.
import type { ActionSchema, Context, Service, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { domainAction, errorAsValue, idempotent } from "../../shared/action";
import { config } from "../../shared/config";
import { Cron } from "croner";
import { dbMixin } from "../../shared/db.mixin";
import { ApiError, ApiErrorType } from "../../shared/errors";
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
import { type CycleOptions, type CycleReport, type RenewalDeps, type RenewalProduct, renewalStatus, runRenewalCycle } from "./renewal-cycle";
import { claimRenewal, releaseRenewal } from "./renewal-lease";
import { unsubscribe } from "./unsubscribe";
import { schemas } from "./schemas";

interface Locals {
	db: BillingDb & { sandbox: SandboxModels };
	deps: BillingDeps;
	relay: OutboxRelay;
	cron: Cron;
	cycle: Promise<CycleReport> | null;
	/** Aborted when the node drains (SIGTERM): cycles stop claiming customers. */
	draining: AbortController;
	runCycle(options: Omit<CycleOptions, "owner">): Promise<CycleReport>;
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
		runRenewals: {
			params: schemas.runRenewals,
			handler(ctx: Context<{ at?: string }>) {
				return this.runCycle({ at: ctx.params.at ? new Date(ctx.params.at) : new Date() });
			},
		},
		renewalStatus: {
			params: schemas.runRenewals,
			handler(ctx: Context<{ at?: string }>) {
				return renewalStatus(this.deps, { at: ctx.params.at ? new Date(ctx.params.at) : undefined });
			},
		},
		// The sandbox test clock: runs what falls due for one account up to `advanceTo`.
		advanceClock: {
			params: schemas.advanceClock,
			async handler(ctx: Context<{ accountId: number; advanceTo: string }>) {
				const account = await ctx.call<{ environment: string }, { accountId: number }>("accounts.get", { accountId: ctx.params.accountId });
				if (account.environment !== "sandbox") throw new ApiError(ApiErrorType.BadRequest, "Only sandbox accounts have a test clock");
				const at = new Date(ctx.params.advanceTo);
				if (at.getTime() < Date.now()) throw new ApiError(ApiErrorType.BadRequest, "advanceTo must not be in the past");
				return this.runCycle({ at, accountId: ctx.params.accountId });
			},
		},
		getCustomer: idempotent(domainAction(schemas.getById, getCustomer)),
		getTransaction: idempotent(domainAction(schemas.getById, getTransaction)),
		listCustomers: idempotent(domainAction(schemas.listCustomers, listCustomers)),
		listTransactions: idempotent(domainAction(schemas.listTransactions, listTransactions)),
		sandboxOperations: {
			params: schemas.sandboxOperations,
			handler(ctx: Context<Parameters<typeof listSandboxOperations>[1]>) {
				return listSandboxOperations(this.db.sandbox, ctx.params);
			},
		},
	},

	events: {
		// Sent by stopOnSignals before the broker waits for in-flight requests, so a running cycle ends soon.
		"broker.draining"() {
			this.cron?.stop();
			this.draining.abort();
		},
	},

	created() {
		this.draining = new AbortController();
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
		// Every billing node runs the cycle; the leases share the work.
		this.cron = new Cron(config().renewalCron, { timezone: config().timeZone, protect: true }, async () => {
			this.cycle = this.runCycle({ at: new Date() }).catch(err => {
				this.logger.error("Renewal cycle failed:", (err as Error).message);
				return { charged: 0, declined: 0, suspended: 0, skipped: 0 };
			});
			await this.cycle;
			this.cycle = null;
		});
	},

	methods: {
		/** Runs a renewal cycle on this node; products are read once per cycle. */
		async runCycle(options: Omit<CycleOptions, "owner">): Promise<CycleReport> {
			const products = new Map<string, Promise<RenewalProduct | null>>();
			const { renewalRetryHours, renewalMaxAttempts } = config();
			const deps: RenewalDeps = {
				...this.deps,
				retryHours: renewalRetryHours,
				maxAttempts: renewalMaxAttempts,
				productOf: (accountId, productId) => {
					const key = `${accountId}:${productId}`;
					if (!products.has(key)) products.set(key, this.broker.call<RenewalProduct | null, object>("accounts.getProduct", { accountId, productId }));
					return products.get(key)!;
				},
			};
			const report = await runRenewalCycle(deps, { leaseMs: config().renewalLeaseMs, ...options, owner: this.broker.nodeID, signal: this.draining.signal });
			this.relay.kick();
			if (report.charged + report.declined + report.suspended > 0) this.logger.info("Renewal cycle:", report);
			return report;
		},
	},

	async stopped() {
		this.cron?.stop();
		this.draining.abort();
		// A cycle in progress finishes the renewals it holds before the node stops.
		await this.cycle;
		await this.relay?.stop();
	},
};

export default BillingService;
