// The loop every notifications node runs for buyers' emails: every poll it
// reads the emails due from the email schedule (by key, never by searching the
// emails), claims each by its id and sends it. Emails are few (one per payment
// at most), so a pass sends a few at a time. Nodes share the work only through
// the database (the claim's lease).
import type { Listing } from "../../shared/schedule";
import { createWake, passesWhile } from "./delivery-worker";
import type { NotificationsDeps } from "./deps";
import { attemptEmail } from "./email-attempt";
import { EmailStatus } from "./states";

export const EMAIL_POLL_MS = 500;
export const EMAIL_SLOT_MS = 1000;
const AT_ONCE = 4;

export interface EmailWorker {
	start(): void;
	stop(): Promise<void>;
	/** Emails just stored: their first attempt now, without waiting for their slot to complete (the pass finds them if this node dies). */
	attemptNow(ids: string[]): void;
}

export function createEmailWorker(deps: NotificationsDeps): EmailWorker {
	let running = false;
	let loop: Promise<void> | null = null;
	const wake = createWake();
	/** First attempts started by attemptNow: stopping waits for them. */
	const inFlight = new Set<Promise<unknown>>();

	/** One email's listing: tried, then unlisted unless it is still due in that slot (held by another node, or not yet tried). */
	async function handle(listing: Listing<string>): Promise<void> {
		const id = String(listing.id);
		const status = await attemptEmail(deps, id);
		const doc = await deps.db.emails.findById(id, { status: 1, nextAttemptAt: 1, lease: 1 }).lean();
		const stillHere = doc?.status === EmailStatus.Pending && status === null && (doc.lease?.until.getTime() ?? 0) > deps.now().getTime();
		if (!stillHere)
			await deps.emails.schedule.remove(listing.id, listing.at, doc?.status === EmailStatus.Pending ? doc.nextAttemptAt : null);
	}

	async function pass(): Promise<void> {
		const now = deps.now();
		const due = await deps.emails.schedule.due(new Date(now.getTime() - EMAIL_SLOT_MS), now);
		for (let from = 0; from < due.length && running; from += AT_ONCE) {
			await Promise.all(due.slice(from, from + AT_ONCE).map(handle));
		}
	}

	const run = () =>
		passesWhile(
			() => running,
			pass,
			wake,
			EMAIL_POLL_MS,
			err => deps.logger.warn(`Email worker could not claim work: ${err}`),
		);

	return {
		start() {
			if (running) return;
			running = true;
			loop = run();
		},
		async stop() {
			running = false;
			wake.kick();
			await Promise.all([loop, ...inFlight]);
		},
		attemptNow(ids) {
			if (!running) return;
			const work = Promise.all(ids.map(id => attemptEmail(deps, id))).catch(err =>
				deps.logger.warn(`Email first attempts failed: ${(err as Error).message}`),
			);
			inFlight.add(work);
			void work.finally(() => inFlight.delete(work));
		},
	};
}
