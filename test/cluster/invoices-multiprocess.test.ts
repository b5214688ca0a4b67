// Gapless invoice numbers on real processes (issues 37 and 46): two billing
// nodes and two invoicing nodes (`npm run node` with SERVICES=billing or
// SERVICES=invoicing) over a real NATS server, the rest of the service in this
// process. Checkouts and refunds of one account run through the HTTP API; one
// invoicing node is SIGKILLed mid-run, then every invoicing node is stopped for
// 60 s and one started again. Meanwhile the payments' webhooks go out: billing
// never waits for invoicing. Each account's invoice numbers must be 1..N with no
// gap and no repeat, each approved charge must have exactly one invoice, and
// each refund one credit note; the merchant's lists show each document once, by
// number, newest first.
import { MongoClient } from "mongodb";
import { databaseNameFor } from "../../shared/db.mixin";
import { billingNodes, serviceNodes, startWithBillingNodes } from "../factories/billing-nodes";
import { createShop, submitCheckout } from "../factories/checkout";
import { everyPage } from "../factories/list-pages";
import { admin, bearer } from "../factories/merchant";
import { type Envelope, startWebhookReceiver, type WebhookReceiver } from "../factories/webhook-receiver";
import type { TestApp } from "../setup/app";
import { type NatsServer, startNats } from "../setup/nats";

const CHECKOUTS = 60;
const BILLING_NODES = ["billing-1", "billing-2"];
/** How long no invoicing node runs (issue 46). */
const OUTAGE_MS = 60_000;

let nats: NatsServer;
let app: TestApp;
let receiver: WebhookReceiver;
const nodes = billingNodes();
const invoicing = serviceNodes("invoicing");
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

beforeAll(async () => {
	nats = await startNats();
	app = await startWithBillingNodes(nodes, {
		natsUrl: nats.url,
		nodeIds: BILLING_NODES,
		env: { RENEWAL_CRON: "0 0 1 1 *" },
		services: ["gateway", "accounts", "sessions", "checkout", "payments", "notifications", "metrics", "refunds"],
		requestTimeout: 30_000,
	});
	for (const id of ["invoicing-1", "invoicing-2"]) invoicing.start(id);
	await invoicing.waitFor(app.broker, ["invoicing-1", "invoicing-2"]);
	receiver = await startWebhookReceiver();
}, 90_000);

afterAll(async () => {
	nodes.killAll();
	invoicing.killAll();
	await receiver?.stop();
	await app?.stop();
	await nats?.stop();
});

/** The numbers' places in their sequence, sorted, and what is wrong with them: repeats and gaps. */
function gapsAndRepeats(sequences: number[]) {
	const sorted = [...sequences].sort((a, b) => a - b);
	return { repeats: sorted.filter((n, i) => sorted[i - 1] === n), gaps: sorted.filter((n, i) => n !== i + 1) };
}

/** A checkout and, when it paid, a refund of 1.00 of its charge; the charge's id, or null. */
async function checkoutAndRefund(shop: Awaited<ReturnType<typeof createShop>>, refunds: Promise<unknown>[]): Promise<number | null> {
	const paid = await submitCheckout(app, shop, { productId: shop.products.charge }).catch(() => null);
	if (paid?.body?.code !== "OK") return null;
	const tx = await app.http().get(`/api/customer/${paid.body.customerId}/transactions`).set(bearer(shop));
	const charge = tx.body.data?.[0];
	if (!charge) return null;
	refunds.push(
		app
			.http()
			.get(`/api/refund/${charge.id}?amountToRefund=1`)
			.set(bearer(shop))
			.set("Idempotency-Key", `mp-${charge.id}`)
			.catch(() => null),
	);
	return charge.id as number;
}

const received = (type: string) =>
	new Set(receiver.requests.map(r => JSON.parse(r.rawBody) as Envelope).flatMap(e => (e.type === type ? [e.transaction_id] : [])));

test("When checkouts and refunds run on two billing nodes, an invoicing node is SIGKILLed while it issues and then no invoicing node runs for 60 s, then the payments' webhooks go out meanwhile, and once invoicing is back invoice and credit note numbers are 1..N without a gap or a repeat, one per payment and refund", async () => {
	const shop = await createShop(app);
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url }).expect(200);
	const client = await MongoClient.connect(process.env.MONGO_URL!);
	const billing = client.db(databaseNameFor("billing", process.env.MONGO_URL!));
	const documents = client.db(databaseNameFor("invoicing", process.env.MONGO_URL!));
	const invoices = documents.collection<{ _id: number; accountId: number; sequence: number }>("invoices");
	const creditNotes = documents.collection<{ _id: number; accountId: number; sequence: number }>("credit_notes");
	const transactions = billing.collection<{ _id: number; accountId: number; type: string; status: string; amount: number }>("transactions");
	try {
		// Act: 4 checkout streams and a refund of each paid charge; invoicing-2 dies once 15 invoices exist.
		let next = 0;
		const refunds: Promise<unknown>[] = [];
		const stream = async () => {
			while (next < CHECKOUTS) {
				next++;
				await checkoutAndRefund(shop, refunds);
			}
		};
		const streams = Promise.all(Array.from({ length: 4 }, stream));
		for (let waited = 0; (await invoices.countDocuments({ accountId: shop.accountId })) < 15 && waited < 60_000; waited += 20)
			await sleep(20);
		const atKill = await invoices.countDocuments({ accountId: shop.accountId });
		invoicing.processes.get("invoicing-2")!.kill("SIGKILL");
		await streams;
		await Promise.all(refunds);
		// No invoicing node at all: payments go on, and their webhooks reach the merchant before invoicing is back.
		invoicing.processes.get("invoicing-1")!.kill("SIGKILL");
		const outageEnds = Date.now() + OUTAGE_MS;
		const duringOutage: number[] = [];
		while (Date.now() < outageEnds - 10_000 && duringOutage.length < 10) {
			const charge = await checkoutAndRefund(shop, refunds);
			if (charge !== null) duringOutage.push(charge);
		}
		await Promise.all(refunds);
		let delivered = received("TRANSACTION");
		while (duringOutage.some(id => !delivered.has(id)) && Date.now() < outageEnds) {
			await sleep(250);
			delivered = received("TRANSACTION");
		}
		const missingDuringOutage = duringOutage.filter(id => !delivered.has(id));
		const issuedDuringOutage = await invoices.countDocuments({ _id: { $in: duringOutage } });
		await sleep(Math.max(0, outageEnds - Date.now()));
		invoicing.start("invoicing-3");
		await invoicing.waitFor(app.broker, ["invoicing-3"]);

		// Billing's sweep hands over what waited, and invoicing issues it.
		const charged = () => transactions.countDocuments({ accountId: shop.accountId, type: "SUBSCRIPTION_START", status: "APPROVED" });
		const refunded = () => transactions.countDocuments({ accountId: shop.accountId, type: "REFUNDED", status: "APPROVED" });
		const deadline = Date.now() + 90_000;
		for (;;) {
			const [i, c, n, r] = await Promise.all([
				invoices.countDocuments({ accountId: shop.accountId }),
				charged(),
				creditNotes.countDocuments({ accountId: shop.accountId }),
				refunded(),
			]);
			if ((i === c && n === r) || Date.now() > deadline) break;
			await sleep(250);
		}

		// Assert: the outage's payments reached the merchant without their invoices, which came after.
		expect({ duringOutage: duringOutage.length > 0, missingDuringOutage, issuedDuringOutage }).toEqual({
			duringOutage: true,
			missingDuringOutage: [],
			issuedDuringOutage: 0,
		});
		// Every approved charge has its invoice and every refund its credit note, by key; numbers 1..N.
		const issued = await invoices.find({ accountId: shop.accountId }).toArray();
		const notes = await creditNotes.find({ accountId: shop.accountId }).toArray();
		const charges = await transactions.find({ accountId: shop.accountId, type: "SUBSCRIPTION_START", status: "APPROVED" }).toArray();
		const refundRows = await transactions.find({ accountId: shop.accountId, type: "REFUNDED", status: "APPROVED" }).toArray();
		expect(issued.map(i => i._id).sort()).toEqual(charges.map(t => t._id).sort());
		expect(notes.map(n => n._id).sort()).toEqual(refundRows.map(t => t._id).sort());
		expect(gapsAndRepeats(issued.map(i => i.sequence))).toEqual({ repeats: [], gaps: [] });
		expect(gapsAndRepeats(notes.map(n => n.sequence))).toEqual({ repeats: [], gaps: [] });
		// The numbers' pending entries go a moment after their documents are written (numbering.ts: releaseNumber).
		const readSequences = () =>
			documents
				.collection<{ _id: string; last: number; pending: unknown[] }>("document_sequences")
				.find({ _id: { $in: [`${shop.accountId}:invoice`, `${shop.accountId}:credit_note`] } })
				.toArray();
		let sequences = await readSequences();
		for (let i = 0; i < 20 && sequences.some(s => s.pending.length > 0); i++) {
			await sleep(250);
			sequences = await readSequences();
		}
		expect(sequences.map(s => ({ last: s.last, pending: s.pending.length })).sort((a, b) => b.last - a.last)).toEqual([
			{ last: issued.length, pending: 0 },
			{ last: notes.length, pending: 0 },
		]);
		// Each invoice's event reached the merchant once invoicing was back.
		const unannounced = () => {
			const announced = received("INVOICE_ISSUED");
			return issued.filter(i => !announced.has(i._id)).map(i => i._id);
		};
		for (const until = Date.now() + 60_000; unannounced().length > 0 && Date.now() < until; ) await sleep(250);
		// On failure, what notifications holds of the late ones and whether billing still lists their requests.
		const late = unannounced();
		const notifications = client.db(databaseNameFor("notifications", process.env.MONGO_URL!));
		const stored = await notifications
			.collection<{ transactionId: number; type: string; status: string; attempts: number }>("webhook_deliveries")
			.find({ transactionId: { $in: late }, type: "INVOICE_ISSUED" }, { projection: { transactionId: 1, status: 1, attempts: 1 } })
			.toArray();
		const stillListed = await billing
			.collection<{ ids: number[] }>("issue_request_schedule")
			.find({ ids: { $in: late } })
			.toArray();
		expect({ late, stored, stillListed }).toEqual({ late: [], stored: [], stillListed: [] });
		// The merchant's lists, page by page: N..1, each document once (issue 45: a retried issue listed one twice, and
		// concurrent issuers listed numbers out of order).
		for (const [path, listedDocuments] of [
			["/api/invoices", issued],
			["/api/credit-notes", notes],
		] as const) {
			const listed = await everyPage<{ id: number; number: string }>(app, shop, path, { limit: 7 });
			expect({ path, numbers: listed.map(d => Number(d.number.slice(-6))) }).toEqual({
				path,
				numbers: listedDocuments.map((_, i) => listedDocuments.length - i),
			});
			expect(new Set(listed.map(d => d.id)).size).toBe(listedDocuments.length);
		}
		// The kill fell in the middle of the run.
		expect(atKill).toBeLessThan(charges.length);
		expect(charges.length).toBeGreaterThan(30);
	} finally {
		await client.close();
	}
}, 400_000);
