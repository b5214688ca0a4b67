// GET /api/refund/{id}: refunds a transaction fully or partly, exactly once
// per Idempotency-Key. Billing owns the transaction and the processor; this
// service owns the keys and the spec's answers.
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { callsThrough } from "../../shared/call";
import { dbMixin } from "../../shared/db.mixin";
import type { RefundsDeps } from "./deps";
import { forgetExpiredKeys, type RefundRequest, refund } from "./idempotent-refund";
import { createRefundsDb, type RefundsDb } from "./models";
import { schemas } from "./schemas";

interface Locals {
	db: RefundsDb;
	deps: RefundsDeps;
	sweeper: NodeJS.Timeout;
}

const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

const RefundsService: ServiceSchema<ServiceSettingSchema, Record<string, never>, Locals> = {
	name: "refunds",
	mixins: [dbMixin("refunds", createRefundsDb)],

	actions: {
		refund: {
			params: schemas.refund,
			handler(ctx: Context<RefundRequest>) {
				return refund(this.deps, ctx.params);
			},
		},
	},

	async started() {
		this.deps = {
			db: this.db,
			call: callsThrough(this.broker),
			now: () => new Date(),
		};
		this.sweeper = setInterval(
			() => void forgetExpiredKeys(this.deps).catch(err => this.logger.warn("Key sweep failed:", err.message)),
			SWEEP_INTERVAL_MS,
		);
		this.sweeper.unref();
	},

	stopped() {
		clearInterval(this.sweeper);
	},
};

export default RefundsService;
