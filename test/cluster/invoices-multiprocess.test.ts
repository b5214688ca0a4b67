// Gapless invoice numbers on real processes (issue 37): two billing nodes
// (`npm run node` with SERVICES=billing) over a real NATS server, the rest of the
// service in this process. Checkouts and refunds of one account run through the
// HTTP API on both nodes at once; one node is SIGKILLed mid-run, while it issues.
// Each account's invoice numbers must be 1..N with no gap and no repeat, each
// approved charge must have exactly one invoice, and each refund one credit note;
// the merchant's lists show each document once, by number, newest first.
import { MongoClient } from "mongodb";
import { databaseNameFor } from "../../shared/db.mixin";
import { billingNodes, startWithBillingNodes } from "../factories/billing-nodes";
import { createShop, submitCheckout } from "../factories/checkout";
import { everyPage } from "../factories/list-pages";
import { bearer } from "../factories/merchant";
import type { TestApp } from "../setup/app";
import { type NatsServer, startNats } from "../setup/nats";

const CHECKOUTS = 60;
const BILLING_NODES = ["billing-1", "billing-2"];

let nats: NatsServer;
let app: TestApp;
const nodes = billingNodes();
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
}, 90_000);

afterAll(async () => {
	nodes.killAll();
	await app?.stop();
	await nats?.stop();
});

/** The numbers' places in their sequence, sorted, and what is wrong with them: repeats and gaps. */
function gapsAndRepeats(sequences: number[]) {
	const sorted = [...sequences].sort((a, b) => a - b);
	return { repeats: sorted.filter((n, i) => sorted[i - 1] === n), gaps: sorted.filter((n, i) => n !== i + 1) };
}

test("When checkouts and refunds run on two billing nodes and one is SIGKILLed while it issues, then invoice and credit note numbers are 1..N without a gap or a repeat, one per payment and refund", async () => {
	const shop = await createShop(app);
	const client = await MongoClient.connect(process.env.MONGO_URL!);
	const billing = client.db(databaseNameFor("billing", process.env.MONGO_URL!));
	const invoices = billing.collection<{ _id: number; accountId: number; sequence: number }>("invoices");
	const creditNotes = billing.collection<{ _id: number; accountId: number; sequence: number }>("credit_notes");
	const transactions = billing.collection<{ _id: number; accountId: number; type: string; status: string; amount: number }>("transactions");
	try {
		// Act: 4 checkout streams and a refund of each paid charge, on both nodes; billing-2 dies once 15 invoices exist.
		let next = 0;
		const refunds: Promise<unknown>[] = [];
		const stream = async () => {
			while (next < CHECKOUTS) {
				next++;
				const paid = await submitCheckout(app, shop, { productId: shop.products.charge }).catch(() => null);
				const customerId = paid?.body?.customerId;
				if (paid?.body?.code !== "OK") continue;
				const tx = await app.http().get(`/api/customer/${customerId}/transactions`).set(bearer(shop));
				const charge = tx.body.data?.[0];
				if (charge)
					refunds.push(
						app
							.http()
							.get(`/api/refund/${charge.id}?amountToRefund=1`)
							.set(bearer(shop))
							.set("Idempotency-Key", `mp-${charge.id}`)
							.catch(() => null),
					);
			}
		};
		const streams = Promise.all(Array.from({ length: 4 }, stream));
		for (let waited = 0; (await invoices.countDocuments({ accountId: shop.accountId })) < 15 && waited < 60_000; waited += 20)
			await sleep(20);
		const atKill = await invoices.countDocuments({ accountId: shop.accountId });
		nodes.processes.get("billing-2")!.kill("SIGKILL");
		await streams;
		await Promise.all(refunds);

		// The survivor's relay sweeps what the killed node left in its outboxes, and issues those documents.
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

		// Assert: every approved charge has its invoice and every refund its credit note, by key; numbers 1..N.
		const issued = await invoices.find({ accountId: shop.accountId }).toArray();
		const notes = await creditNotes.find({ accountId: shop.accountId }).toArray();
		const charges = await transactions.find({ accountId: shop.accountId, type: "SUBSCRIPTION_START", status: "APPROVED" }).toArray();
		const refundRows = await transactions.find({ accountId: shop.accountId, type: "REFUNDED", status: "APPROVED" }).toArray();
		expect(issued.map(i => i._id).sort()).toEqual(charges.map(t => t._id).sort());
		expect(notes.map(n => n._id).sort()).toEqual(refundRows.map(t => t._id).sort());
		expect(gapsAndRepeats(issued.map(i => i.sequence))).toEqual({ repeats: [], gaps: [] });
		expect(gapsAndRepeats(notes.map(n => n.sequence))).toEqual({ repeats: [], gaps: [] });
		const sequences = await billing
			.collection<{ _id: string; last: number; pending: unknown[] }>("document_sequences")
			.find({ _id: { $in: [`${shop.accountId}:invoice`, `${shop.accountId}:credit_note`] } })
			.toArray();
		expect(sequences.map(s => ({ last: s.last, pending: s.pending.length })).sort((a, b) => b.last - a.last)).toEqual([
			{ last: issued.length, pending: 0 },
			{ last: notes.length, pending: 0 },
		]);
		// The merchant's lists, page by page: N..1, each document once (issue 45: a retried issue listed one twice, and
		// concurrent issuers listed numbers out of order).
		for (const [path, documents] of [
			["/api/invoices", issued],
			["/api/credit-notes", notes],
		] as const) {
			const listed = await everyPage<{ id: number; number: string }>(app, shop, path, { limit: 7 });
			expect({ path, numbers: listed.map(d => Number(d.number.slice(-6))) }).toEqual({
				path,
				numbers: documents.map((_, i) => documents.length - i),
			});
			expect(new Set(listed.map(d => d.id)).size).toBe(documents.length);
		}
		// The kill fell in the middle of the run.
		expect(atKill).toBeLessThan(charges.length);
		expect(charges.length).toBeGreaterThan(30);
	} finally {
		await client.close();
	}
}, 300_000);
