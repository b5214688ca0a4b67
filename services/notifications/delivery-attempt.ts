// One attempt at one delivery: claim it with a lease, read the account's
// target, POST, and settle the delivery while still holding the lease, the
// attempt logged in the same update. A worker that lost its lease (it took longer than the lease and
// another node re-claimed the delivery) settles nothing; the receiver may then
// get the event twice, which is why receivers dedupe on the event id.
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Environment, WebhookTarget } from "../../shared/contracts/accounts";
import { groupCommit, perObject } from "../../shared/group-commit";
import { type Lease, leaseFree, newLease, raw } from "../../shared/persistence";
import { retryDelayMs, retryWindowEnd } from "./backoff";
import type { NotificationsDeps } from "./deps";
import type { AttemptRecord, DeliveryDoc } from "./models";
import { signatureHeader } from "./signature";
import { DeliveryStatus, deliveryMove, STAY_PENDING } from "./states";

/** PENDING -> DELIVERED: the receiver answered 2xx. */
const DELIVERED = deliveryMove(DeliveryStatus.Pending, DeliveryStatus.Delivered);
/** PENDING -> DEAD: failed again after the retry window closed. */
const GIVEN_UP = deliveryMove(DeliveryStatus.Pending, DeliveryStatus.Dead);
/** PENDING -> WAITING: the account has no webhook URL. */
const PARK = deliveryMove(DeliveryStatus.Pending, DeliveryStatus.Waiting);

import { postWebhook } from "./webhook-request";

export const USER_AGENT = "payment-service-webhooks/1.0";
/** Covers the account lookup, the request and the bookkeeping; past it another node may retry. */
const LEASE_MARGIN_MS = 30_000;

export interface AttemptOutcome {
	time: Date;
	statusCode: number | null;
	latencyMs: number;
	error: string | null;
	environment: Environment | null;
}

/** A claim for one attempt: it covers the account lookup, the request and the bookkeeping; past it another node may retry. */
export function deliveryLease(deps: NotificationsDeps, now: Date): Lease {
	return newLease(`${deps.nodeId}/${randomUUID()}`, now, deps.settings.timeoutMs + LEASE_MARGIN_MS);
}

/**
 * PENDING -> PENDING (claimed): the most overdue delivery whose lease is free
 * or expired, or the given one if it is due and free, in one atomic update.
 */
export async function claimDueDelivery(deps: NotificationsDeps, deliveryId: string): Promise<DeliveryDoc | null> {
	const now = deps.now();
	return deps.db.deliveries
		.findOneAndUpdate(
			{
				_id: deliveryId,
				...STAY_PENDING.filter,
				nextAttemptAt: { $lte: now },
				...leaseFree("lease", now),
			},
			{
				$set: { lease: deliveryLease(deps, now) },
				// The attempt number is taken with the claim, so overlapping attempts never share one.
				$inc: { attempts: 1 },
			},
			{ sort: { nextAttemptAt: 1 }, returnDocument: "after" },
		)
		.lean<DeliveryDoc>();
}

/** PENDING -> PENDING: gives back a claim without attempting it (the node is stopping); its attempt number stays unused. */
export async function releaseClaim(deps: NotificationsDeps, delivery: DeliveryDoc): Promise<void> {
	await deps.db.deliveries.updateOne(
		{ _id: delivery._id, ...STAY_PENDING.filter, "lease.owner": delivery.lease!.owner },
		{ $set: { lease: null } },
	);
}

/** The account has no webhook URL: nothing to attempt. */
const NO_URL = "NO_URL";

async function send(deps: NotificationsDeps, delivery: DeliveryDoc): Promise<AttemptOutcome | typeof NO_URL> {
	const time = deps.now();
	let target: WebhookTarget;
	try {
		target = await deps.webhookTarget(delivery.accountId);
	} catch (err) {
		return { time, statusCode: null, latencyMs: 0, error: `webhook target unavailable: ${(err as Error).message}`, environment: null };
	}
	const { environment } = target;
	if (!target.webhookUrl) return NO_URL;
	const sentAt = deps.now();
	const started = performance.now();
	const response = await postWebhook({
		url: target.webhookUrl,
		body: delivery.body,
		headers: {
			"Content-Type": "application/json",
			"User-Agent": USER_AGENT,
			"X-Webhook-Id": delivery._id,
			"X-Webhook-Signature": signatureHeader(target.webhookSecret, delivery.body, sentAt),
		},
		timeoutMs: deps.settings.timeoutMs,
		allowPrivateAddresses: environment === "sandbox",
	});
	return { time: sentAt, ...response, latencyMs: Math.round(performance.now() - started), environment };
}

/** What the delivery's log keeps of an attempt. */
function attemptRecord(deps: NotificationsDeps, delivery: DeliveryDoc, outcome: AttemptOutcome): AttemptRecord {
	const { time, statusCode, latencyMs, error } = outcome;
	return { attempt: delivery.attempts, node: deps.nodeId, time, statusCode, latencyMs, error };
}

/**
 * Settles a claimed delivery, its attempt logged in the same update: its new status, or null when its lease was lost
 * meanwhile (the attempt is then logged alone, as it was made).
 */
async function settle(deps: NotificationsDeps, delivery: DeliveryDoc, outcome: AttemptOutcome): Promise<DeliveryStatus | null> {
	const now = deps.now();
	const held = { _id: delivery._id, ...STAY_PENDING.filter, "lease.owner": delivery.lease!.owner };
	const released = { lease: null, lastStatusCode: outcome.statusCode };
	const logged = { $push: { attemptLog: attemptRecord(deps, delivery, outcome) } };
	const windowEnd = retryWindowEnd(delivery.windowFrom, outcome.environment, deps.settings).getTime();
	let status: DeliveryStatus;
	let update: object;
	if (outcome.error === null) {
		// PENDING -> DELIVERED
		status = DeliveryStatus.Delivered;
		update = { $set: { ...released, ...DELIVERED.set, deliveredAt: now, lastError: null }, ...logged };
	} else if (now.getTime() >= windowEnd) {
		// PENDING -> DEAD: failed again after the window closed.
		status = DeliveryStatus.Dead;
		update = { $set: { ...released, ...GIVEN_UP.set, lastError: outcome.error }, ...logged };
	} else {
		// PENDING -> PENDING: retry later, but no later than the window's end, for one last try.
		status = DeliveryStatus.Pending;
		const nextAttemptAt = new Date(Math.min(now.getTime() + retryDelayMs(delivery.backoffStep + 1, deps.settings.retryBaseMs), windowEnd));
		await deps.attempts.add(delivery._id, nextAttemptAt);
		update = { $set: { ...released, nextAttemptAt, lastError: outcome.error }, $inc: { backoffStep: 1 }, ...logged };
	}
	// The listing it was claimed from is dropped by the worker's next pass over that slot (delivery-worker.ts).
	if (await settlerOf(deps)({ held, update, record: logged.$push.attemptLog })) return status;
	await raw(deps.db.deliveries).updateOne({ _id: delivery._id }, logged);
	return null;
}

interface Settlement {
	held: { _id: string };
	update: object;
	record: AttemptRecord;
}

/**
 * Settles deliveries, those settled at once on this node in one command (shared/group-commit.ts); answers whether the
 * lease still held. Straight to the driver: nothing to cast, and it runs once per webhook.
 */
const settlerOf = (deps: NotificationsDeps) => settlerFor(deps.db.deliveries);

const settlerFor = perObject((model: NotificationsDeps["db"]["deliveries"]) => {
	const deliveries = raw(model);
	return groupCommit<Settlement, boolean>(async group => {
		if (group.length === 1) return [(await deliveries.updateOne(group[0].held, group[0].update)).matchedCount === 1];
		const result = await deliveries.bulkWrite(
			group.map(({ held, update }) => ({ updateOne: { filter: held, update } })),
			{ ordered: false },
		);
		if (result.matchedCount === group.length) return group.map(() => true);
		// Some had lost their lease: the settled are those whose log now holds their attempt.
		const docs = await deliveries.find({ _id: { $in: group.map(s => s.held._id) } }, { projection: { attemptLog: 1 } }).toArray();
		const logs = new Map(docs.map(d => [d._id, d.attemptLog ?? []]));
		return group.map(({ held, record }) =>
			(logs.get(held._id) ?? []).some(
				r => r.node === record.node && r.attempt === record.attempt && new Date(r.time).getTime() === record.time.getTime(),
			),
		);
	});
});

/**
 * PENDING -> WAITING for a claimed delivery whose account has no webhook URL:
 * no attempt is made or logged, and its attempt number is given back. A URL set
 * while this ran would miss it (the release already looked), so the account is
 * asked again once it is parked, and released at once if it has one now.
 */
async function parkUntilUrl(deps: NotificationsDeps, delivery: DeliveryDoc): Promise<void> {
	const parked = await deps.db.deliveries.updateOne(
		{ _id: delivery._id, ...PARK.filter, "lease.owner": delivery.lease!.owner },
		{ $set: { ...PARK.set, lease: null }, $inc: { attempts: -1 } },
	);
	if (parked.matchedCount === 0) return;
	deps.logger.debug(`Webhook ${delivery._id} (account ${delivery.accountId}) waits: the account has no webhook URL`);
	const target = await deps.webhookTarget(delivery.accountId).catch(() => null);
	if (target?.webhookUrl) await returnToPending(deps, delivery._id, DeliveryStatus.Waiting);
}

/** Due now, with a fresh retry window and backoff: how a delivery returns to PENDING from any state. */
export function freshWindow(now: Date) {
	return { nextAttemptAt: now, windowFrom: now, backoffStep: 0 };
}

/** Back to PENDING, due now, from the given states; listed first, so a worker finds it. Answers the delivery, or null. */
export async function returnToPending(
	deps: NotificationsDeps,
	deliveryId: string,
	from: DeliveryStatus[] | DeliveryStatus,
): Promise<DeliveryDoc | null> {
	const move = deliveryMove(from, DeliveryStatus.Pending);
	const now = deps.now();
	await deps.attempts.add(deliveryId, now);
	return deps.db.deliveries
		.findOneAndUpdate({ _id: deliveryId, ...move.filter }, { $set: { ...move.set, ...freshWindow(now) } }, { returnDocument: "after" })
		.lean<DeliveryDoc>();
}

/** Sends a claimed delivery and settles it; throws only when the database fails. */
export async function attemptDelivery(deps: NotificationsDeps, delivery: DeliveryDoc): Promise<void> {
	const outcome = await send(deps, delivery);
	if (outcome === NO_URL) return parkUntilUrl(deps, delivery);
	const status = await settle(deps, delivery, outcome);
	// Never the secret or the signature: only ids, the status and the error.
	const what = `Webhook ${delivery._id} (account ${delivery.accountId}) attempt ${delivery.attempts}`;
	if (status === null) deps.logger.warn(`${what}: lease lost before settling; another attempt follows`);
	else if (status === DeliveryStatus.Dead) deps.logger.warn(`${what} failed and the retry window is over, DEAD: ${outcome.error}`);
	else if (outcome.error) deps.logger.info(`${what} failed: ${outcome.error}`);
	else deps.logger.debug(`${what} delivered: HTTP ${outcome.statusCode} in ${outcome.latencyMs} ms`);
}
