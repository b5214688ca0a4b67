// The subscription metrics (docs/metrics.md): the month counters of every
// account, which only this service writes, and their reads. Billing computes
// each entry in the same update as the change it counts and its outbox relay
// hands the entries here (apply) before their events leave the outbox; an
// entry is counted once by its event's id, however often it arrives. The
// gateway calls `figures` for GET /api/metrics and the dashboard's and
// operators' routes. Billing tells every node of a test clock's move
// (clockMoved); a clock not heard of is asked of billing once (shared/account-now.ts).
import type { Context, Service, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { clockMovedAction, createAccountNow } from "../../shared/account-now";
import { idempotent } from "../../shared/action";
import { call } from "../../shared/call";
import type { Applicable } from "../../shared/contracts/metrics";
import { dbMixin } from "../../shared/db.mixin";
import { createMetricsCounters, type Released } from "./counters";
import type { MetricsDeps } from "./deps";
import { metricsErrors } from "./errors";
import { readMetrics } from "./metrics-read";
import { createMetricsDb, type MetricsDb } from "./models";
import { schemas } from "./schemas";

interface Locals {
	db: MetricsDb;
	deps: MetricsDeps;
}

const MetricsService: ServiceSchema<ServiceSettingSchema, Record<string, never>, Locals> = {
	name: "metrics",
	mixins: [dbMixin("metrics", createMetricsDb)],

	actions: {
		// GET /api/metrics, the dashboard's charts and the operators' per-MID view (metrics-read.ts).
		figures: idempotent(metricsErrors.action(schemas.figures, readMetrics)),
		// Billing's relay: counted once by event id, so it is safe to send again after a timeout or a crash.
		apply: idempotent({
			params: schemas.apply,
			async handler(this: Service & Locals, ctx: Context<{ entries: Applicable[]; released?: Released[] }>) {
				this.deps.counters.released(ctx.params.released ?? []);
				await this.deps.counters.apply(ctx.params.entries);
				return { applied: ctx.params.entries.length };
			},
		}),
		// A billing node moved a sandbox account's test clock (shared/account-now.ts).
		clockMoved: clockMovedAction(schemas.clockMoved),
	},

	started() {
		const broker = this.broker;
		this.deps = {
			db: this.db,
			counters: createMetricsCounters(this.db),
			clocks: createAccountNow(
				async accountId => new Date((await call(broker, "billing.clockOf", { accountId })).at),
				() => new Date(),
			),
			now: () => new Date(),
			productOf: (accountId, productId) => call(broker, "accounts.getProduct", { accountId, productId }),
			merchantAccountsOf: accountId => call(broker, "accounts.listMerchantAccounts", { accountId }),
		};
	},
};

export default MetricsService;
