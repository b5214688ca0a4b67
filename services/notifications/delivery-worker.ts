// The loop every notifications node runs: every IDLE_POLL_MS it reads the
// deliveries whose attempt is due from the attempt schedule (by key, never by
// searching the deliveries), claims each by its id and attempts it, a few at a
// time so one slow receiver does not hold up the others. A delivery just
// stored is claimed by its id and attempted at once when a slot is free.
// Nodes share the work only through the database (the claim's lease).
import type { Listing } from "../../shared/schedule";
import { attemptDelivery, claimDueDelivery, releaseClaim } from "./delivery-attempt";
import type { NotificationsDeps } from "./deps";
import type { DeliveryDoc } from "./models";
import { DeliveryStatus } from "./states";

export const IDLE_POLL_MS = 300;
/** The width of a slot of the attempt schedule: a retry is made at most this much (plus a poll) after it is due. */
export const ATTEMPT_SLOT_MS = 1000;
export const MAX_IN_FLIGHT = 32;
/** Listings whose deliveries a pass reads with one query. */
const PASS_BATCH = 500;
/** How long stopping waits for a claim query: one stuck on an unreachable database must not hold up shutdown. */
const STOP_CLAIM_GRACE_MS = 1000;

export interface DeliveryWorker {
	start(): void;
	/** Stops claiming and waits for the attempts in flight (each bounded by the webhook timeout). */
	stop(): Promise<void>;
	/** New work may be due: look now instead of at the next poll. */
	kick(): void;
	/** A delivery was just stored: attempt it now if a slot is free, else look for it soon. */
	deliver(deliveryId: string): void;
	/** Attempts for which a delivery can be claimed now. */
	freeSlots(): number;
	/** A delivery stored already claimed by this node: its attempt, now. */
	attempt(delivery: DeliveryDoc): void;
}

export function createDeliveryWorker(deps: NotificationsDeps): DeliveryWorker {
	let running = false;
	let loop: Promise<void> | null = null;
	const wake = createWake();
	const slots = createSlots(deps, wake);

	/** One pass over the attempts due by now: claims and attempts those still due, a batch of listings at a time. */
	async function pass(): Promise<void> {
		const now = deps.now();
		// Complete slots only: everything listed in them is due.
		const due = await deps.attempts.due(new Date(now.getTime() - ATTEMPT_SLOT_MS), now);
		for (let from = 0; from < due.length && running; from += PASS_BATCH) {
			const listings = await stillDue(deps, due.slice(from, from + PASS_BATCH), now);
			if (!(await claimAll(listings))) return;
		}
	}

	/** Claims and attempts each delivery as slots free up; false once the worker stops. */
	async function claimAll(listings: Listing<string>[]): Promise<boolean> {
		for (const listing of listings) {
			if (!(await slots.waitForOne(() => running)) || !(await claimAndAttempt(String(listing.id)))) return false;
		}
		return true;
	}

	/** False if the worker stopped while claiming. */
	async function claimAndAttempt(deliveryId: string): Promise<boolean> {
		// Another node may claim it first: then it is that node's.
		const delivery = await claimDueDelivery(deps, deliveryId);
		if (delivery && !running) {
			// Stopped while claiming: give it back for another node rather than start an attempt now.
			await releaseClaim(deps, delivery).catch(() => {});
			return false;
		}
		if (delivery) slots.track(attemptDelivery(deps, delivery), delivery._id);
		return true;
	}

	const run = () =>
		passesWhile(
			() => running,
			pass,
			wake,
			IDLE_POLL_MS,
			err => deps.logger.warn(`Webhook worker could not claim work: ${err}`),
		);

	function deliver(deliveryId: string): void {
		if (!running || slots.free() === 0) {
			wake.kick();
			return;
		}
		// Another node (or this loop) may have claimed it first: then there is nothing to do.
		slots.track(
			claimDueDelivery(deps, deliveryId).then(delivery => (delivery ? attemptDelivery(deps, delivery) : undefined)),
			deliveryId,
		);
	}

	return {
		start() {
			if (running) return;
			running = true;
			loop = run();
		},
		async stop() {
			running = false;
			wake.kick();
			let grace: NodeJS.Timeout | undefined;
			await Promise.race([loop, new Promise(resolve => (grace = setTimeout(resolve, STOP_CLAIM_GRACE_MS)))]);
			clearTimeout(grace);
			// Attempts in flight finish and are recorded; each is bounded by the webhook timeout.
			await slots.settled();
		},
		kick: wake.kick,
		deliver,
		freeSlots: () => (running ? slots.free() : 0),
		attempt: delivery => slots.track(attemptDelivery(deps, delivery), delivery._id),
	};
}

type Wake = ReturnType<typeof createWake>;

/** A worker's loop: a pass, then a pause a kick cuts short, while it runs; a failed pass is reported and the next one tried. */
export async function passesWhile(
	running: () => boolean,
	pass: () => Promise<void>,
	wake: Wake,
	pauseMs: number,
	report: (message: string) => void,
): Promise<void> {
	while (running()) {
		try {
			await pass();
		} catch (err) {
			if (!running()) break;
			report((err as Error).message);
		}
		await wake.pause(pauseMs);
	}
}

/** The attempts in flight, at most MAX_IN_FLIGHT, a few at a time so one slow receiver does not hold up the others. */
function createSlots(deps: NotificationsDeps, wake: Wake) {
	const inFlight = new Set<Promise<void>>();
	/** The loop waits for an attempt to finish before it claims more. */
	let waiting = false;
	return {
		free: () => Math.max(0, MAX_IN_FLIGHT - inFlight.size),
		/** Waits until an attempt may start; false if the worker stopped meanwhile. */
		async waitForOne(running: () => boolean): Promise<boolean> {
			while (running() && inFlight.size >= MAX_IN_FLIGHT) {
				waiting = true;
				await wake.pause(IDLE_POLL_MS);
				waiting = false;
			}
			return running();
		},
		track(work: Promise<void>, deliveryId: string): void {
			const attempt: Promise<void> = work
				.catch(err => deps.logger.error(`Webhook ${deliveryId}: attempt bookkeeping failed: ${(err as Error).message}`))
				.finally(() => {
					inFlight.delete(attempt);
					if (waiting) wake.kick();
				});
			inFlight.add(attempt);
		},
		/** Resolves once every attempt in flight has finished and been recorded. */
		settled: () => Promise.allSettled([...inFlight]),
	};
}

/** A pause the worker can cut short. A kick that arrives while the loop is busy is remembered, so it is never lost. */
export function createWake() {
	let kicked = false;
	let wake: (() => void) | null = null;
	return {
		kick(): void {
			kicked = true;
			wake?.();
		},
		pause(ms: number): Promise<void> {
			if (kicked) {
				kicked = false;
				return Promise.resolve();
			}
			return new Promise(resolve => {
				const timer = setTimeout(done, ms);
				function done() {
					clearTimeout(timer);
					wake = null;
					kicked = false;
					resolve();
				}
				wake = done;
			});
		},
	};
}

/** Reads the listings' deliveries by key, unlists those that have left their slot, and answers the ones due. */
async function stillDue(deps: NotificationsDeps, listings: Listing<string>[], now: Date): Promise<Listing<string>[]> {
	const docs = await deps.db.deliveries
		.find({ _id: { $in: listings.map(e => String(e.id)) } }, { status: 1, lease: 1, nextAttemptAt: 1 })
		.lean();
	const byId = new Map(docs.map(doc => [doc._id, doc]));
	const stateOf = (e: Listing<string>) => listingState(byId.get(String(e.id)), e.at, now);
	await deps.attempts.removeAll(listings.filter(e => stateOf(e) === "left"));
	return listings.filter(e => stateOf(e) === "due");
}

/**
 * What a listing in a complete slot stands for now: a delivery to claim, one
 * another node holds (kept, in case that node dies), or one that has left the
 * slot (delivered, dead, waiting, or listed again at a later time: dropped).
 */
function listingState(doc: Pick<DeliveryDoc, "status" | "lease" | "nextAttemptAt"> | undefined, slot: Date, now: Date) {
	if (
		doc?.status !== DeliveryStatus.Pending ||
		Math.floor(doc.nextAttemptAt.getTime() / ATTEMPT_SLOT_MS) * ATTEMPT_SLOT_MS !== slot.getTime()
	)
		return "left";
	return (doc.lease?.until.getTime() ?? 0) > now.getTime() ? "held" : "due";
}
