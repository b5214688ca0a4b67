// Every billing node sweeps, on a timer, for the refunds and checkouts an
// outage or a crash left unsettled (refunds/refund-recovery.ts,
// subscriptions/checkout-recovery.ts); the refunds' leases and the customers'
// compare-and-set share the work between nodes.
import type { Logger } from "moleculer";
import { config } from "../../../shared/config";
import type { BillingDeps } from "../deps";
import { type RecoveryReport, recoverRefunds } from "../refunds/refund-recovery";
import { recoverCheckouts } from "../subscriptions/checkout-recovery";
import { singleFlight } from "./single-flight";

export interface SweepsOptions {
	deps: BillingDeps;
	/** This node's name, written on the refund leases it holds. */
	owner: string;
	/** Aborted when the node drains: a sweep claims nothing new. */
	signal: AbortSignal;
	logger: Logger;
}

/** One refund sweep at a time; its report, or its failure, goes to every caller. */
function refundSweep({ deps, owner, signal, logger }: SweepsOptions) {
	return singleFlight(() =>
		recoverRefunds(deps, {
			owner,
			signal,
			onError: (refundId, err) => logger.warn(`Refund recovery: ${refundId} stays RESERVED for the next sweep:`, err.message),
		})
			.then(report => {
				if (report.refundTransactionIds.length > 0) deps.relay({ transactions: report.refundTransactionIds });
				if (report.completed + report.failed > 0)
					logger.info("Refund recovery:", { completed: report.completed, failed: report.failed, skipped: report.skipped });
				return report;
			})
			.catch(err => {
				logger.warn("Refund recovery failed:", (err as Error).message);
				throw err;
			}),
	);
}

/** One sweep for checkouts left PENDING at a time; it never fails (what it could not settle waits for the next). */
function checkoutSweep({ deps, signal, logger }: SweepsOptions) {
	return singleFlight(() =>
		recoverCheckouts(deps, {
			signal,
			onError: (customerId, err) => logger.warn(`Checkout recovery: customer ${customerId} stays PENDING for the next sweep:`, err.message),
		})
			.then(report => {
				if (report.activated + report.declined + report.abandoned > 0) logger.info("Checkout recovery:", report);
			})
			.catch(err => logger.warn("Checkout recovery failed:", (err as Error).message)),
	);
}

export function createSweeps(options: SweepsOptions) {
	const refunds = refundSweep(options);
	const checkouts = checkoutSweep(options);
	let timer: NodeJS.Timeout | undefined;
	return {
		/** Ops: settle the refunds crashes left RESERVED now, instead of at the next timer. */
		recoverRefunds: (): Promise<RecoveryReport> => refunds.run(),
		start(): void {
			timer = setInterval(() => {
				void refunds.run().catch(() => undefined);
				void checkouts.run();
			}, config().refundRecoveryIntervalMs);
			timer.unref();
		},
		stopTimer(): void {
			clearInterval(timer);
		},
		/** A sweep in progress finishes the refund it holds, and the checkout it settles. */
		async finished(): Promise<void> {
			await refunds.running()?.catch(() => undefined);
			await checkouts.running();
		},
	};
}
