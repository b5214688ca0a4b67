// The limit the checkout is compared with: a bare Node `http` server that
// answers the same two requests (POST /api/session, POST /api/checkout) with
// the same database writes our services make for one checkout, through the
// raw `mongodb` driver, and nothing else: no framework, no broker, no
// validation, no card decryption, no reads. The benchmark runs it on the same
// database server as the service, in the same run.
//
// The writes, in our order (services/sessions, services/payments, services/billing, services/notifications):
//   session:  sessions insert
//   checkout, before the answer:
//     vault_cards insert (the sealed card)
//     payment_operations insert (with its transaction id) + update (zero-amount verification)
//     subscription_locks insert (duplicate check), checkout_schedule listing,
//     timeline_heads: the account's and the product's customers (appends answering the count), the email's bag;
//     customers insert (PENDING)
//     sessions update (consume)
//     payment_operations insert (with its transaction id) + update (charge)
//     timeline_heads: the account's transactions (append), the customer's bag;
//     outbox_schedule listing, transactions insert (with its TRANSACTION event)
//     renewal_schedule listing, outbox_schedule listing, customers update (ACTIVE + CONVERSION event)
//     sequences $inc once per 100 ids of each of 3 sequences (our id blocks)
//   checkout, after the answer (outbox relay and webhook delivery):
//     timeline_heads: the account's and the customer's events (one append each for both events),
//     webhook_attempt_schedule listing, webhook_deliveries insert of both (stored claimed for their first attempt),
//     outbox $pull (and $push to relayed) on the transaction and on the customer,
//     per event (2): the delivery's settle update (with its attempt logged);
//     the invoice (issue 37): document_sequences $inc with its pending entry, the account's invoice list (append),
//     invoices insert, the pending entry pulled; metrics_months $inc (issue 38); mid_stats $inc (issue 26);
//     its INVOICE_ISSUED stored and delivered as the two events above (2 appends, listing, insert, settle)
// Not counted as part of the limit: our reads (the session, the customer before its payment, the webhooks'
// duplicate check), the card's decryption and the vault's sealing, the framework, the broker and validation.
//
// The limit the keyed reads are compared with (READ_BILLING_DB set): GET /api/customer/{id} and
// GET /api/transaction/{id} answered by checking the Bearer token against one held in memory (its SHA-256, compared
// in constant time), one findOne by _id in the deployment's own billing database, the account check and our views'
// JSON (services/billing/views.ts), so both answer the same bytes from the same documents.
//
//   MONGO_URL=mongodb://127.0.0.1:27017/bench_baseline PORT=3100 npx tsx bench/baseline-server.ts
//   … READ_BILLING_DB=bench_embedded_billing READ_TOKEN=<the shop's API token> READ_ACCOUNT_ID=<its account> …
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { type Db, MongoClient } from "mongodb";
import type { CustomerDoc } from "../services/billing/records/customer";
import type { TransactionDoc } from "../services/billing/records/transaction";
import { RENEWAL_SCHEDULE } from "../services/billing/renewals/renewal-schedule";
import { toCustomerView, toTransactionView } from "../services/billing/views";
import { type ScheduleOptions, slotDocuments } from "../shared/schedule";
import { readBody, serveBare } from "./bare-server";

const ID_BLOCK = 100;

type ListingOptions = Pick<ScheduleOptions, "slotMs" | "shards">;
/** Our schedules' slots and shards (services/billing/subscriptions/checkout-recovery.ts, outbox.ts, renewal-schedule.ts; notifications). */
const CHECKOUTS: ListingOptions = { slotMs: 10_000, shards: 2 };
const OUTBOX: ListingOptions = { slotMs: 1000, shards: 4 };
const RENEWALS: ListingOptions = { slotMs: RENEWAL_SCHEDULE.slotMs, shards: RENEWAL_SCHEDULE.shards };
const ATTEMPTS: ListingOptions = { slotMs: 1000, shards: 4 };

interface Databases {
	sessions: Db;
	payments: Db;
	billing: Db;
	notifications: Db;
}

/** Ids as our id allocator hands them out: a block of 100 reserved with one $inc, one reservation at a time. */
function idBlocks(db: Db, sequence: string) {
	let next = 0;
	let end = 0;
	let reserving: Promise<void> | null = null;
	const reserve = async () => {
		const before = await db
			.collection<{ _id: string; next: number }>("sequences")
			.findOneAndUpdate({ _id: sequence }, { $inc: { next: ID_BLOCK } }, { upsert: true, returnDocument: "before" });
		next = before?.next ?? 0;
		end = next + ID_BLOCK;
	};
	return async (): Promise<number> => {
		while (next >= end) {
			reserving ??= reserve().finally(() => (reserving = null));
			await reserving;
		}
		return next++;
	};
}

function createHandlers(dbs: Databases) {
	const sessions = dbs.sessions.collection("sessions");
	const vault = dbs.payments.collection("vault_cards");
	const operations = dbs.payments.collection("payment_operations");
	const locks = dbs.billing.collection("subscription_locks");
	const customers = dbs.billing.collection("customers");
	const transactions = dbs.billing.collection("transactions");
	const outboxSchedule = dbs.billing.collection("outbox_schedule");
	const renewalSchedule = dbs.billing.collection("renewal_schedule");
	const attemptSchedule = dbs.notifications.collection("webhook_attempt_schedule");
	const deliveries = dbs.notifications.collection("webhook_deliveries");
	const checkoutSchedule = dbs.billing.collection("checkout_schedule");
	const billingTimelines = dbs.billing.collection("timeline_heads");
	const notificationTimelines = dbs.notifications.collection("timeline_heads");
	const documentSequences = dbs.billing.collection("document_sequences");
	const invoices = dbs.billing.collection("invoices");
	const metricsMonths = dbs.billing.collection("metrics_months");
	const midStats = dbs.billing.collection("mid_stats");
	const ids = {
		operations: idBlocks(dbs.payments, "payment_transactions"),
		customers: idBlocks(dbs.billing, "customers"),
		transactions: idBlocks(dbs.billing, "transactions"),
	};
	const accountId = 1;
	const midId = 1;

	async function createSession(domain: string): Promise<string> {
		const createdAt = new Date();
		const _id = randomUUID();
		await sessions.insertOne({
			_id: _id as never,
			accountId,
			domain,
			status: "VALID",
			createdAt,
			expiresAt: new Date(createdAt.getTime() + 300_000),
			usedAt: null,
			usedBy: null,
		});
		return _id;
	}

	async function processorOperation(
		kind: string,
		key: string,
		cardToken: string,
		amount: number,
		currency: string | null,
	): Promise<number> {
		const processorTransactionId = await ids.operations();
		await operations.insertOne({
			_id: key as never,
			transactionId: processorTransactionId,
			kind,
			initiator: "customer",
			cardToken,
			amount,
			currency,
			midId,
			outcome: null,
			createdAt: new Date(),
		});
		await operations.updateOne(
			{ _id: key as never },
			{ $set: { outcome: { status: "APPROVED", processorTransactionId, reason: null, hardDecline: false } } },
		);
		return processorTransactionId;
	}

	/** A timeline append (shared/timeline.ts): one update of the head answering its count before. */
	async function append(timelines: typeof billingTimelines, key: string, entries: [number | string, number][]): Promise<void> {
		await timelines.findOneAndUpdate(
			{ _id: key as never },
			{ $inc: { n: entries.length }, $push: { recent: { $each: entries, $slice: -300 } } as never },
			{ upsert: true, returnDocument: "before", projection: { n: 1 } },
		);
	}

	/** A bag entry (shared/timeline.ts): one upsert. */
	async function addToBag(key: string, entry: [number, number]): Promise<void> {
		await billingTimelines.updateOne({ _id: key as never }, { $push: { recent: entry } as never }, { upsert: true });
	}

	/** A listing in a keyed time-slot schedule, in the slot document and shard ours use (shared/schedule.ts): one upsert. */
	async function list(schedule: typeof outboxSchedule, options: ListingOptions, id: string | number, at: Date): Promise<void> {
		const [[key]] = slotDocuments([{ id, at }], options);
		await schedule.updateOne({ _id: key as never }, { $addToSet: { ids: id } as never }, { upsert: true });
	}

	async function checkout(input: {
		sessionId: string;
		email: string;
		name: string;
		lastName?: string;
		cardExpiry: string;
		additionalData?: object;
	}) {
		const now = new Date();
		const attemptId = `co_${randomBytes(12).toString("base64url")}`;
		const cardToken = `card_${randomBytes(16).toString("hex")}`;
		await vault.insertOne({
			_id: cardToken as never,
			iv: randomBytes(12).toString("base64"),
			ciphertext: randomBytes(16).toString("base64"),
			tag: randomBytes(16).toString("base64"),
			bin: "424242",
			last4: "4242",
			expiry: input.cardExpiry,
			createdAt: now,
		});
		await processorOperation("verify", `${attemptId}:verify`, cardToken, 0, null);

		const customerId = await ids.customers();
		await locks.insertOne({ _id: randomBytes(32).toString("hex") as never, customerId, createdAt: now });
		await list(checkoutSchedule, CHECKOUTS, customerId, now);
		const email = input.email.toLowerCase();
		await append(billingTimelines, `c:${accountId}`, [[customerId, now.getTime()]]);
		await append(billingTimelines, `cp:${accountId}:1`, [[customerId, now.getTime()]]);
		await addToBag(`ce:${accountId}:${email}`, [customerId, now.getTime()]);
		const customer = {
			_id: customerId,
			accountId,
			environment: "sandbox",
			email,
			name: input.name,
			lastName: input.lastName ?? "",
			status: "PENDING",
			productId: 1,
			subscriptionTimestamp: now,
			nextRenewalTimestamp: null,
			lastTimeBilled: null,
			unsubscriptionTimestamp: null,
			renewalActive: false,
			attempts: 0,
			cardBin: "424242",
			cardLast4: "4242",
			cardType: "visa",
			cardExpiredTime: input.cardExpiry,
			cardToken,
			cardFingerprint: randomBytes(32).toString("hex"),
			midId,
			midName: "MID A",
			sessionId: input.sessionId,
			additionalData: input.additionalData ?? null,
			authorizationId: null,
			outbox: [],
			billingAnchor: null,
			periodsBilled: 0,
			renewalLease: null,
			createdAt: now,
		};
		await customers.insertOne(customer as never);
		await sessions.findOneAndUpdate(
			{ _id: input.sessionId as never, status: "VALID", expiresAt: { $gt: now } },
			{ $set: { status: "USED", usedAt: now, usedBy: attemptId } },
		);

		const chargeKey = `${attemptId}:charge`;
		const processorTransactionId = await processorOperation("charge", chargeKey, cardToken, 999, "EUR");
		const transactionEvent = { id: randomUUID(), type: "TRANSACTION", createdAt: new Date() };
		const transaction = {
			_id: await ids.transactions(),
			accountId,
			customerId,
			timestamp: new Date(),
			success: true,
			type: "SUBSCRIPTION_START",
			amount: 999,
			currency: "EUR",
			currencyId: 978,
			productId: 1,
			processorTransactionId,
			midId,
			midName: "MID A",
			refundStatus: "REFUNDABLE",
			status: "APPROVED",
			paymentMethod: "visa",
			declineReason: null,
			idempotencyKey: chargeKey,
			refundableRemaining: 999,
			originalTransactionId: null,
			outbox: [transactionEvent],
		};
		await append(billingTimelines, `t:${accountId}`, [[transaction._id, transaction.timestamp.getTime()]]);
		await addToBag(`tc:${customerId}`, [transaction._id, transaction.timestamp.getTime()]);
		await list(outboxSchedule, OUTBOX, `t${transaction._id}:${transactionEvent.id}`, transactionEvent.createdAt);
		await transactions.insertOne(transaction as never);
		const conversionEvent = { id: randomUUID(), type: "CONVERSION", createdAt: new Date() };
		const next = new Date(now);
		next.setMonth(next.getMonth() + 1);
		await list(outboxSchedule, OUTBOX, `c${customerId}:${conversionEvent.id}`, conversionEvent.createdAt);
		const active = await customers.findOneAndUpdate(
			{ _id: customerId as never, status: "PENDING" },
			{
				$set: {
					status: "ACTIVE",
					nextRenewalTimestamp: next,
					renewalActive: true,
					lastTimeBilled: now,
					authorizationId: null,
					billingAnchor: now,
					periodsBilled: 1,
				},
				$push: { outbox: conversionEvent } as never,
			},
			{ returnDocument: "after" },
		);
		await list(renewalSchedule, RENEWALS, customerId, next);
		return {
			customerId,
			events: [
				{ event: transactionEvent, source: transactions, sourceId: transaction._id, data: { transaction, customer: active } },
				{ event: conversionEvent, source: customers, sourceId: customerId, data: { customer: active, transaction } },
			],
		};
	}

	type Delivered = { event: { id: string; type: string; createdAt: Date }; data: object };

	/** Webhook deliveries stored (claimed for their first attempt) and settled as delivered, as notifications does. */
	async function deliveryWrites(customerId: number, events: Delivered[]): Promise<void> {
		const now = new Date();
		const stored = events.map(({ event, data }) => ({
			_id: event.id,
			accountId,
			customerId,
			transactionId: null,
			type: event.type,
			createdAt: now.toISOString(),
			eventAt: now,
			body: JSON.stringify({ id: event.id, type: event.type, createdAt: event.createdAt, accountId, customerId, data }),
			status: "PENDING",
			attempts: 1,
			backoffStep: 0,
			windowFrom: now,
			nextAttemptAt: now,
			lastError: null,
			lastStatusCode: null,
			lease: { owner: "baseline", until: new Date(now.getTime() + 40_000) },
			enqueuedAt: now,
			deliveredAt: null,
		}));
		await append(
			notificationTimelines,
			`e:${accountId}`,
			stored.map(d => [d._id, now.getTime()]),
		);
		await append(
			notificationTimelines,
			`ec:${customerId}`,
			stored.map(d => [d._id, now.getTime()]),
		);
		for (const [key, ids] of slotDocuments(
			stored.map(d => ({ id: d._id, at: now })),
			ATTEMPTS,
		))
			await attemptSchedule.updateOne({ _id: key as never }, { $addToSet: { ids: { $each: ids } } as never }, { upsert: true });
		await deliveries.insertMany(stored as never[], { ordered: false });
		for (const { event } of events) {
			await deliveries.updateOne({ _id: event.id as never, "lease.owner": "baseline" }, {
				$set: { lease: null, lastStatusCode: 200, status: "DELIVERED", deliveredAt: new Date(), lastError: null },
				$push: { attemptLog: { attempt: 1, node: "baseline", time: new Date(), statusCode: 200, latencyMs: 1, error: null } },
			} as never);
		}
	}

	/**
	 * The payment's invoice (a gapless number: the sequence's $inc with the pending entry, the invoice, its listing, the
	 * entry pulled), the month's metrics and the MID's day: what services/billing/invoices, metrics and mid_stats write.
	 */
	async function documentWrites(customerId: number, transaction: { _id: number; amount: number }): Promise<Delivered> {
		const now = new Date();
		const key = `${accountId}:invoice`;
		const sequence = await documentSequences.findOneAndUpdate(
			{ _id: key as never },
			{ $inc: { last: 1 }, $push: { pending: { number: null, key: transaction._id, at: now } } } as never,
			{ upsert: true, returnDocument: "after", projection: { last: 1 } },
		);
		const number = `INV-${now.getUTCFullYear()}-${String(sequence?.last ?? 0).padStart(6, "0")}`;
		await append(billingTimelines, `inv:${accountId}`, [[transaction._id, now.getTime()]]);
		const invoice = {
			_id: transaction._id,
			accountId,
			customerId,
			sequence: sequence?.last ?? 0,
			number,
			issuedAt: now,
			currency: "EUR",
			lines: [{ description: "Plan", quantity: 1, unitAmount: transaction.amount, amount: transaction.amount }],
			total: transaction.amount,
		};
		await invoices.insertOne(invoice as never);
		await documentSequences.updateOne({ _id: key as never }, { $pull: { pending: { key: transaction._id } } } as never);
		const month = now.toISOString().slice(0, 7);
		await metricsMonths.updateOne(
			{ _id: `${accountId}:${month}` as never },
			{ $inc: { "counts.newCustomers": 1, "amounts.EUR.revenue": transaction.amount } } as never,
			{ upsert: true },
		);
		await midStats.updateOne(
			{ _id: `${midId}:${now.toISOString().slice(0, 10)}` as never },
			{ $inc: { charges: 1, amount: transaction.amount } } as never,
			{ upsert: true },
		);
		return { event: { id: randomUUID(), type: "INVOICE_ISSUED", createdAt: now }, data: { invoice: { id: invoice._id, number } } };
	}

	/** The outbox relay's and the webhook worker's writes, after the answer as ours are; then the invoice and its event. */
	async function webhookWrites(customerId: number, events: Awaited<ReturnType<typeof checkout>>["events"]): Promise<void> {
		await deliveryWrites(customerId, events);
		for (const { event, source, sourceId } of events)
			await source.updateOne({ _id: sourceId as never }, { $pull: { outbox: { id: event.id } }, $push: { relayed: event.id } } as never);
		const invoiceEvent = await documentWrites(customerId, events[0].data.transaction);
		await deliveryWrites(customerId, [invoiceEvent]);
	}

	return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
		const url = new URL(req.url ?? "/", "http://localhost");
		if (req.method === "POST" && url.pathname === "/api/session") {
			await readBody(req);
			const sessionId = await createSession(url.searchParams.get("domain") ?? "");
			res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" }).end(sessionId);
			return;
		}
		if (req.method === "POST" && url.pathname === "/api/checkout") {
			const { customerId, events } = await checkout(JSON.parse(await readBody(req)));
			res
				.writeHead(200, { "Content-Type": "application/json" })
				.end(JSON.stringify({ code: "OK", message: "Payment accepted", customerId }));
			void webhookWrites(customerId, events).catch(err => console.error("webhook writes failed:", err));
			return;
		}
		res.writeHead(404).end();
	};
}

interface ReadTarget {
	billing: Db;
	token: string;
	accountId: number;
}

const READ_PATH = /^\/api\/(customer|transaction)\/(\d+)$/;
const sha256 = (text: string) => createHash("sha256").update(text).digest();

/** The keyed reads: the token, one read by _id, the account, the view. Anything else is left to the checkout handlers. */
function createReadHandler(target: ReadTarget) {
	const tokenHash = sha256(target.token);
	const customers = target.billing.collection<CustomerDoc>("customers");
	const transactions = target.billing.collection<TransactionDoc>("transactions");
	return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
		const match = req.method === "GET" ? READ_PATH.exec(req.url ?? "") : null;
		if (!match) return false;
		const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
		if (!bearer || !timingSafeEqual(sha256(bearer), tokenHash)) {
			res.writeHead(401).end();
			return true;
		}
		const id = Number(match[2]);
		const doc = match[1] === "customer" ? await customers.findOne({ _id: id } as never) : await transactions.findOne({ _id: id } as never);
		const view =
			doc?.accountId !== target.accountId
				? null
				: match[1] === "customer"
					? toCustomerView(doc as CustomerDoc)
					: toTransactionView(doc as TransactionDoc);
		res.writeHead(200, { "Content-Type": "application/json" }).end(view ? JSON.stringify(view) : "");
		return true;
	};
}

async function main(): Promise<void> {
	const url = process.env.MONGO_URL;
	if (!url) throw new Error("MONGO_URL must be set");
	const base = /^mongodb:\/\/[^/]+\/([^?]+)/.exec(url)?.[1] ?? "baseline";
	const client = await MongoClient.connect(url);
	const dbs: Databases = {
		sessions: client.db(`${base}_sessions`),
		payments: client.db(`${base}_payments`),
		billing: client.db(`${base}_billing`),
		notifications: client.db(`${base}_notifications`),
	};
	// The same indexes as our collections (mongo-java-server maintains the unique ones only).
	await dbs.billing.collection("customers").createIndex({ accountId: 1 });
	await dbs.billing.collection("transactions").createIndex({ idempotencyKey: 1 }, { unique: true });
	await dbs.payments.collection("payment_operations").createIndex({ transactionId: 1 }, { unique: true });
	await dbs.notifications
		.collection("webhook_deliveries")
		.createIndexes([{ key: { status: 1, nextAttemptAt: 1 } }, { key: { accountId: 1, eventAt: -1 } }]);

	const checkouts = createHandlers(dbs);
	const readBilling = process.env.READ_BILLING_DB;
	const reads = readBilling
		? createReadHandler({
				billing: client.db(readBilling),
				token: process.env.READ_TOKEN ?? "",
				accountId: Number(process.env.READ_ACCOUNT_ID),
			})
		: null;
	const handle = async (req: IncomingMessage, res: ServerResponse) => {
		if (!(await reads?.(req, res))) await checkouts(req, res);
	};
	serveBare("baseline", Number(process.env.PORT ?? 3100), handle, () => client.close());
}

main().catch(err => {
	console.error(err instanceof Error ? err.message : err);
	process.exit(1);
});
