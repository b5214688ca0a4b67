// Usage billing's events and aggregates (docs/usage.md): meters, batches of
// events counted exactly once into keyed running aggregates per customer,
// meter and period, and each period's close for the charge that bills it.
// Scales by adding nodes (npm run cluster -- --usage-nodes N): any node takes
// any batch, and every node sweeps the batches a dead node left.
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { clockMovedAction, createAccountNow } from "../../shared/account-now";
import { domainAction, domainErrors, idempotent } from "../../shared/action";
import { call, callsThrough } from "../../shared/call";
import { dbMixin } from "../../shared/db.mixin";
import { pageOrBadRequest } from "../../shared/list-page";
import { sweepBatches } from "./batch-sweep";
import type { UsageDeps } from "./deps";
import { USAGE_ERRORS } from "./errors";
import { customerEvents } from "./event-list";
import { ingest } from "./ingest";
import { createMeter, createMeterCache, listMeters } from "./meters";
import { createUsageDb, type UsageDb } from "./models";
import { closePeriod, currentUsage } from "./period-close";
import { schemas } from "./schemas";

const { action, orFail } = domainErrors(USAGE_ERRORS);

/** How often a node looks for batches a dead node left (their lease decides when they are due). */
const SWEEP_MS = 5000;

interface Locals {
	db: UsageDb;
	deps: UsageDeps;
	sweeper?: NodeJS.Timeout;
}

const UsageService: ServiceSchema<ServiceSettingSchema, Record<string, never>, Locals> = {
	name: "usage",
	mixins: [dbMixin("usage", createUsageDb)],

	actions: {
		// POST /api/usage: each event accepted, a duplicate or refused (ingest.ts). Never retried by the broker: a
		// client's retry is, and it is answered as duplicates.
		ingest: action(schemas.ingest, ingest),
		// /admin and the dashboard: an account's meters.
		createMeter: action(schemas.createMeter, createMeter),
		// The admin API's and the dashboard's list; `meters` is the other services' read by code.
		list: idempotent(action(schemas.list, listMeters)),
		meters: idempotent(action(schemas.meters, listMeters)),
		// Billing: a period's charge (period-close.ts); the same answer however often it asks.
		closePeriod: idempotent(action(schemas.closePeriod, closePeriod)),
		currentUsage: idempotent(action(schemas.currentUsage, currentUsage)),
		// GET /api/customer/{id}/usage-events.
		customerEvents: idempotent(domainAction(schemas.customerEvents, customerEvents, result => pageOrBadRequest(orFail(result)))),
		// A billing node moved a sandbox account's test clock (shared/account-now.ts).
		clockMoved: clockMovedAction(schemas.clockMoved),
	},

	started() {
		const broker = this.broker;
		this.deps = {
			db: this.db,
			call: callsThrough(broker),
			now: () => new Date(),
			clocks: createAccountNow(
				async accountId => new Date((await call(broker, "billing.clockOf", { accountId })).at),
				() => new Date(),
			),
			owner: broker.nodeID,
			meterCache: createMeterCache(keys => this.db.meters.find({ _id: { $in: keys } }).lean()),
		};
		const sweep = () =>
			sweepBatches(this.deps)
				.then(finished => finished > 0 && this.logger.info(`Finished ${finished} usage batches a stopped node left`))
				.catch(err => this.logger.warn(`Sweeping usage batches failed: ${(err as Error).message}`));
		this.sweeper = setInterval(sweep, SWEEP_MS);
	},

	stopped() {
		clearInterval(this.sweeper);
	},
};

export default UsageService;
