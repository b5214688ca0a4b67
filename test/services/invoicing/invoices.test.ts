// Invoices and credit notes over HTTP (issue 37, docs/invoices.md): every kind of payment and refund issues its
// document, numbered without gaps per account, with lines and tax to the cent; read as JSON, as a PDF (read back
// with pdfjs-dist), and by the buyer's signed link without a token. The wall clock is April 2027 (CEST), as in
// subscription-changes.test.ts.
import { MongoClient } from "mongodb";
import InvoicingService from "../../../services/invoicing/invoicing.service";
import { databaseNameFor } from "../../../shared/db.mixin";
import { CARDS, createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { everyPage } from "../../factories/list-pages";
import { admin, bearer, createPlan } from "../../factories/merchant";
import { pdfText } from "../../factories/pdf-text";
import { setWallClock } from "../../factories/wall-clock";
import { startWebhookReceiver, type WebhookReceiver } from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";
import { eventually } from "../notifications/webhook-events";

let app: TestApp;
let shop: Shop;
let receiver: WebhookReceiver;
const product: Record<string, number> = {};

const april = (day: number, hour = 0, minute = 0) => Date.UTC(2027, 3, day, hour - 2, minute);

const createProduct = (s: Shop, body: object) => createPlan(app, s, body);

beforeAll(async () => {
	setWallClock(april(1));
	app = await startApp();
	shop = await createShop(app);
	receiver = await startWebhookReceiver();
	await admin(app)
		.patch(`/accounts/${shop.accountId}`, {
			webhookUrl: receiver.url,
			invoicing: {
				legalName: "Shop GmbH",
				address: "Hauptstraße 1\n10115 Berlin",
				taxId: "DE123456789",
				email: "billing@shop.example",
				invoicePrefix: "SHOP",
				language: "de",
				taxRateBps: 2000,
			},
		})
		.expect(200);
	product.twelve = await createProduct(shop, { name: "Basic", amount: 12 });
	product.twentyFour = await createProduct(shop, { name: "Pro", amount: 24 });
	product.reduced = await createProduct(shop, { name: "Books", amount: 10.7, taxRateBps: 700 });
});
afterAll(async () => {
	jest.useRealTimers();
	await receiver.stop();
	await app.stop();
});

const api = (s: Shop = shop) => ({
	get: (path: string) => app.http().get(`/api${path}`).set(bearer(s)),
	post: (path: string, body: object) => app.http().post(`/api${path}`).set(bearer(s)).send(body),
});
const subscribe = async (s: Shop, productId: number) => {
	setWallClock(april(1));
	const res = await submitCheckout(app, s, { productId, card: CARDS.visa });
	expect(res.body.code).toBe("OK");
	return res.body.customerId as number;
};
const transactions = async (id: number) => (await api().get(`/customer/${id}/transactions`).expect(200)).body.data;
const invoicesOf = (customerId: number, s: Shop = shop) =>
	eventually(async () => {
		const page = (await api(s).get(`/invoices?customerId=${customerId}`).expect(200)).body;
		expect(page.data.length).toBeGreaterThan(0);
		return page.data;
	});
const refund = (txId: number, amount: string, key: string) =>
	app.http().get(`/api/refund/${txId}?amountToRefund=${amount}`).set(bearer(shop)).set("Idempotency-Key", key).expect(200);

describe("Invoices", () => {
	test("When a buyer pays €12.00 with 20 % tax included, then invoice SHOP-2027-000001 splits €10.00 and €2.00 out, with the seller's and buyer's details, and INVOICE_ISSUED carries its signed link", async () => {
		const id = await subscribe(shop, product.twelve);

		const [invoice] = await invoicesOf(id);
		const event = await eventually(() => {
			const found = receiver.requests.map(r => JSON.parse(r.rawBody)).find(e => e.type === "INVOICE_ISSUED" && e.customerId === id);
			expect(found).toBeDefined();
			return found;
		});

		const [charge] = await transactions(id);
		expect(invoice).toMatchObject({
			number: "SHOP-2027-000001",
			customerId: id,
			transactionId: charge.id,
			currency: "EUR",
			language: "de",
			seller: { name: "Shop GmbH", email: "billing@shop.example", address: "Hauptstraße 1\n10115 Berlin", taxId: "DE123456789" },
			buyer: { email: expect.stringContaining("@") },
			taxInclusive: true,
			net: 10,
			tax: 2,
			gross: 12,
			total: 12,
			creditApplied: 0,
			descriptor: "MID A",
			transactionType: "SUBSCRIPTION_START",
		});
		expect(invoice.lines).toEqual([
			expect.objectContaining({ kind: "plan", description: "Basic", quantity: 1, unitAmount: 12, taxRate: 20, net: 10, tax: 2, gross: 12 }),
		]);
		expect(invoice.lines[0].periodStart).toMatch(/^2027-04-01/);
		expect(invoice.lines[0].periodEnd).toMatch(/^2027-05-01/);
		expect(event.data.invoice).toEqual({
			id: invoice.id,
			number: "SHOP-2027-000001",
			customerId: id,
			transactionId: charge.id,
			total: 12,
			currency: "EUR",
			url: invoice.url,
		});
		expect((await api().get(`/invoice/${invoice.id}`).expect(200)).body).toEqual(invoice);
		const listed = (await api().get("/events?type=INVOICE_ISSUED").expect(200)).body;
		expect(JSON.stringify(listed)).toContain(event.id);
	});

	test("When the buyer's link is opened without a token, then the page and the PDF show the invoice in German; a tampered link and another account's token find nothing", async () => {
		const id = await subscribe(shop, product.reduced);
		const [invoice] = await invoicesOf(id);
		const http = app.http();

		const page = await http.get(invoice.url).expect(200);
		const pdf = await http
			.get(`${invoice.url}/pdf`)
			.buffer(true)
			.parse(binary as never)
			.expect(200);
		const merchantPdf = await api()
			.get(`/invoice/${invoice.id}/pdf`)
			.buffer(true)
			.parse(binary as never)
			.expect(200);
		const tampered = invoice.url.replace(/.$/, (c: string) => (c === "A" ? "B" : "A"));
		const other = await createShop(app);

		expect(page.headers["content-type"]).toMatch(/^text\/html/);
		expect(page.text).toContain(invoice.number);
		expect(page.text).toContain("Rechnung");
		expect(page.text).toContain("10,70\u00a0€");
		expect(pdf.headers["content-type"]).toBe("application/pdf");
		expect((pdf.body as Buffer).subarray(0, 4).toString()).toBe("%PDF");
		const { text, pages } = await pdfText(pdf.body as Buffer);
		expect(pages).toBe(1);
		expect(text).toContain(invoice.number);
		expect(text).toContain("Shop GmbH");
		// €10.70 with 7 % included: 10.00 net, 0.70 tax.
		expect(text).toContain("0,70");
		expect(merchantPdf.headers["content-disposition"]).toContain(`${invoice.number}.pdf`);
		await http.get(tampered).expect(404);
		await http.get(invoice.url.replace(`/${invoice.id}/`, `/${invoice.id + 1}/`)).expect(404);
		await api(other).get(`/invoice/${invoice.id}`).expect(404);
		await api(other).get(`/invoice/${invoice.id}/pdf`).expect(404);
	});

	test("When a customer renews, upgrades and is refunded, then each payment has one invoice and each refund a credit note that refers to it, all numbered without gaps", async () => {
		const id = await subscribe(shop, product.twelve);
		await admin(app)
			.post(`/accounts/${shop.accountId}/clock`, { advanceTo: new Date(april(30, 23, 30) + 3_600_000).toISOString() })
			.expect(200);
		setWallClock(april(16) + 30 * 86_400_000);
		await api().post(`/customer/${id}/change`, { productId: product.twentyFour, mode: "now_prorated" }).expect(200);

		const charges = await eventually(async () => {
			const found = (await transactions(id)).filter((t: { amount: number }) => t.amount > 0);
			expect(found).toHaveLength(3);
			return found;
		});
		const invoices = await eventually(async () => {
			const found = await invoicesOf(id);
			expect(found).toHaveLength(3);
			return found;
		});
		const [change, renewal, first] = invoices;
		await refund(first.transactionId, "4.5", `inv-refund-${id}-1`);
		await refund(renewal.transactionId, "12", `inv-refund-${id}-2`);
		const notes = await eventually(async () => {
			const found = (await api().get(`/credit-notes?customerId=${id}`).expect(200)).body.data;
			expect(found).toHaveLength(2);
			return found;
		});

		expect(invoices.map((i: { transactionId: number }) => i.transactionId).sort()).toEqual(charges.map((t: { id: number }) => t.id).sort());
		expect(renewal).toMatchObject({ transactionType: "RENEWAL", total: 12, tax: 2 });
		expect(renewal.lines[0].periodStart).toMatch(/^2027-05-01/);
		expect(renewal.lines[0].periodEnd).toMatch(/^2027-06-01/);
		expect(change.transactionType).toBe("SUBSCRIPTION_CHANGE");
		expect(change.lines.map((l: { kind: string }) => l.kind)).toEqual(["unused_time_credit", "new_plan_charge"]);
		expect(change.gross).toBe(change.total);
		expect(change.net + change.tax).toBeCloseTo(change.total, 2);
		const [full, partial] = notes;
		expect(partial).toMatchObject({ reason: "REFUND", invoiceId: first.id, invoiceNumber: first.number, total: 4.5, tax: 0.75, net: 3.75 });
		expect(full).toMatchObject({ reason: "REFUND", invoiceId: renewal.id, total: 12, tax: 2, net: 10 });
		expect(full.lines).toEqual(renewal.lines);
		expect(full.number).toMatch(/^CN-2027-\d{6}$/);
		// Every number of the account, 1..n, once each.
		const all = (await api().get("/invoices?limit=100").expect(200)).body.data.map((i: { number: string }) => Number(i.number.slice(-6)));
		expect([...all].sort((a, b) => a - b)).toEqual(Array.from({ length: all.length }, (_, i) => i + 1));
		const allNotes = (await api().get("/credit-notes?limit=100").expect(200)).body.data.map((n: { number: string }) =>
			Number(n.number.slice(-6)),
		);
		expect([...allNotes].sort((a, b) => a - b)).toEqual(Array.from({ length: allNotes.length }, (_, i) => i + 1));
	});

	test("When an account's prices exclude 20 % tax, then a €10.00 plan charges €12.00 and its invoice adds the tax", async () => {
		const other = await createShop(app);
		await admin(app)
			.patch(`/accounts/${other.accountId}`, { invoicing: { taxRateBps: 2000, pricesIncludeTax: false, language: "es" } })
			.expect(200);
		const ten = await createProduct(other, { name: "Plan", amount: 10 });

		const id = await subscribe(other, ten);

		const [charge] = (await api(other).get(`/customer/${id}/transactions`).expect(200)).body.data;
		const [invoice] = await invoicesOf(id, other);
		expect(charge.amount).toBe(12);
		expect(invoice).toMatchObject({ number: "INV-2027-000001", taxInclusive: false, net: 10, tax: 2, gross: 12, total: 12 });
		expect(invoice.lines[0]).toMatchObject({ unitAmount: 10, net: 10, tax: 2, gross: 12 });
	});

	test("When a buyer uses a 20 % coupon for 2 periods on a €10.00 plan with 20 % tax added, then the card pays €9.60 twice and €12.00 after, and each invoice shows the discount before the tax", async () => {
		const other = await createShop(app);
		await admin(app)
			.patch(`/accounts/${other.accountId}`, { invoicing: { taxRateBps: 2000, pricesIncludeTax: false } })
			.expect(200);
		const ten = await createProduct(other, { name: "Plan", amount: 10 });
		const coupon = (
			await admin(app)
				.post(`/accounts/${other.accountId}/coupons`, { code: "TWENTY", percentOff: 20, duration: "repeating", durationInPeriods: 2 })
				.expect(201)
		).body;
		setWallClock(april(1));
		const paid = await submitCheckout(app, other, { productId: ten, card: CARDS.visa, extra: { promotionCode: "twenty" } });
		const id = paid.body.customerId as number;

		await admin(app)
			.post(`/accounts/${other.accountId}/clock`, { advanceTo: new Date(Date.UTC(2027, 5, 2)).toISOString() })
			.expect(200);

		const charges = (await api(other).get(`/customer/${id}/transactions`).expect(200)).body.data as { type: string; amount: number }[];
		expect(charges.map(t => [t.type, t.amount]).reverse()).toEqual([
			["SUBSCRIPTION_START", 9.6],
			["RENEWAL", 9.6],
			["RENEWAL", 12],
		]);
		const invoices = await eventually(async () => {
			const page = (await api(other).get(`/invoices?customerId=${id}`).expect(200)).body.data;
			expect(page).toHaveLength(3);
			return page;
		});
		const first = invoices.find((i: { number: string }) => i.number.endsWith("000001"));
		expect(first).toMatchObject({ taxInclusive: false, net: 8, tax: 1.6, gross: 9.6, total: 9.6 });
		// The same discount as its transaction's, the coupon's id an integer (docs/openapi.json's Discount).
		const [start] = charges.slice(-1) as unknown as { discount: object }[];
		expect(first.discount).toEqual({ couponId: coupon.id, code: "TWENTY", amount: 2 });
		expect(first.discount).toEqual(start.discount);
		expect(first.lines.map((l: { kind: string; net: number }) => [l.kind, l.net])).toEqual([
			["plan", 10],
			["discount", -2],
		]);
	});

	test("When a 100 % coupon takes a first payment to 0, then it still gets an invoice, total 0, its discount line taking the whole plan off", async () => {
		const other = await createShop(app);
		const ten = await createProduct(other, { name: "Plan", amount: 10 });
		const coupon = (
			await admin(app).post(`/accounts/${other.accountId}/coupons`, { code: "FREEMONTH", percentOff: 100, duration: "once" }).expect(201)
		).body;
		setWallClock(april(1));

		const paid = await submitCheckout(app, other, { productId: ten, card: CARDS.visa, extra: { promotionCode: "FREEMONTH" } });
		const id = paid.body.customerId as number;

		const [charge] = (await api(other).get(`/customer/${id}/transactions`).expect(200)).body.data;
		expect(charge).toMatchObject({ type: "SUBSCRIPTION_START", status: "APPROVED", amount: 0 });
		const [invoice] = await invoicesOf(id, other);
		expect(invoice).toMatchObject({ transactionId: charge.id, net: 0, tax: 0, gross: 0, total: 0, creditApplied: 0 });
		expect(invoice.discount).toEqual({ couponId: coupon.id, code: "FREEMONTH", amount: 10 });
		expect(invoice.lines.map((l: { kind: string; net: number }) => [l.kind, l.net])).toEqual([
			["plan", 10],
			["discount", -10],
		]);
	});

	test("When an invoicing node died after taking a number and listing its invoice (its entry pending, no invoice, billing's request still listed), then billing's sweep hands the request over again and the number is completed: no gap, and each list shows it once", async () => {
		const other = await createShop(app);
		const plan = await createProduct(other, { name: "Plan", amount: 10 });
		const first = await subscribe(other, plan);
		const [lost] = await invoicesOf(first, other);
		// The state left when invoicing dies between taking number 1 and writing the invoice: billing's request stays
		// listed (in the slot of the time it was made, shard id % 4), since invoicing.issue never answered.
		const client = await MongoClient.connect(process.env.MONGO_URL!);
		try {
			const invoicing = client.db(databaseNameFor("invoicing", process.env.MONGO_URL!));
			const billing = client.db(databaseNameFor("billing", process.env.MONGO_URL!));
			const sequenceOf = () => invoicing.collection<{ _id: string }>("document_sequences").findOne({ _id: `${other.accountId}:invoice` });
			// Staged once the first invoice is settled: its number's entry is pulled a moment after it is written.
			await eventually(async () => expect(await sequenceOf()).toMatchObject({ last: 1, pending: [] }));
			await invoicing.collection<{ _id: number }>("invoices").deleteOne({ _id: lost.id });
			await invoicing
				.collection<{ _id: string; pending: object[] }>("document_sequences")
				.updateOne({ _id: `${other.accountId}:invoice` }, { $set: { pending: [{ number: 1, key: lost.id, at: new Date() }] } });
			// The node that died is replaced: a new one knows the sequence only as stored.
			await app.broker.destroyService(app.broker.getLocalService("invoicing")!);
			app.broker.createService(InvoicingService);
			await app.broker.waitForServices(["invoicing"]);
			const second = await subscribe(other, plan);
			// Billing lists the request at a time later than any an earlier test set (the schedules' cursors only move
			// forward), and the wall clock, frozen here, moves past the sweep's delay.
			const at = april(1) + 90 * 86_400_000;
			await billing
				.collection<{ _id: string; ids: number[] }>("issue_request_schedule")
				.updateOne({ _id: `${at}#${lost.id % 4}` }, { $addToSet: { ids: lost.id } }, { upsert: true });
			setWallClock(at + 5_000);

			const [next] = await invoicesOf(second, other);
			const restored = await eventually(async () => (await api(other).get(`/invoice/${lost.id}`).expect(200)).body);
			expect([restored.number, next.number]).toEqual(["INV-2027-000001", "INV-2027-000002"]);
			// The numbers' pending entries go a moment after their invoices are written (numbering.ts: releaseNumber).
			await eventually(async () => expect(await sequenceOf()).toMatchObject({ last: 2, pending: [] }));
			// Listed by the dead node, and again by the one that completed it: once in each list all the same.
			const listed = (await api(other).get("/invoices").expect(200)).body.data.map((i: { number: string }) => i.number);
			const ofCustomer = (await api(other).get(`/invoices?customerId=${first}`).expect(200)).body.data.map((i: { id: number }) => i.id);
			expect(listed).toEqual(["INV-2027-000002", "INV-2027-000001"]);
			expect(ofCustomer).toEqual([lost.id]);
			// Done: billing dropped the request once invoicing answered.
			await eventually(async () => {
				const left = await billing.collection<{ ids: number[] }>("issue_request_schedule").find({ ids: lost.id }).toArray();
				expect(left).toEqual([]);
			});
		} finally {
			await client.close();
		}
	});

	test("When the seller's email is set to something that is not an email address, then 400 naming it and the setting is kept; null takes it off", async () => {
		const other = await createShop(app);
		await admin(app)
			.patch(`/accounts/${other.accountId}`, { invoicing: { email: "sales@other.example" } })
			.expect(200);

		const bad = await Promise.all(
			["not an email", "a@", 42, `${"x".repeat(250)}@b.example`].map(email =>
				admin(app).patch(`/accounts/${other.accountId}`, { invoicing: { email } }),
			),
		);
		const kept = await admin(app).get(`/accounts/${other.accountId}`).expect(200);
		const cleared = await admin(app)
			.patch(`/accounts/${other.accountId}`, { invoicing: { email: null } })
			.expect(200);

		expect(bad.map(r => [r.status, r.body.message])).toEqual(bad.map(() => [400, expect.stringContaining("email")]));
		expect(kept.body.invoicing.email).toBe("sales@other.example");
		expect(cleared.body.invoicing).toMatchObject({ email: null, invoicePrefix: "INV" });
	});

	test("When 40 buyers pay at once and are all refunded at once, then /invoices and /credit-notes list every document once, by number, newest first", async () => {
		// Arrange: one account's numbers taken by concurrent relays.
		const other = await createShop(app);
		const plan = await createProduct(other, { name: "Plan", amount: 10 });
		setWallClock(april(1));
		const customers = await Promise.all(
			Array.from({ length: 40 }, async () => {
				const res = await submitCheckout(app, other, { productId: plan, card: CARDS.visa });
				expect(res.body.code).toBe("OK");
				return res.body.customerId as number;
			}),
		);
		const charges = await Promise.all(
			customers.map(async id => (await api(other).get(`/customer/${id}/transactions`).expect(200)).body.data[0]),
		);
		await Promise.all(
			charges.map(charge =>
				app
					.http()
					.get(`/api/refund/${charge.id}?amountToRefund=1`)
					.set(bearer(other))
					.set("Idempotency-Key", `all-${charge.id}`)
					.expect(200),
			),
		);

		// Act: every page of each list, 7 at a time.
		const walk = (path: string) => everyPage<{ id: number; number: string }>(app, other, `/api${path}`, { limit: 7 });
		const [invoices, creditNotes] = await eventually(async () => {
			const both = [await walk("/invoices"), await walk("/credit-notes")];
			expect(both.map(list => list.length)).toEqual([40, 40]);
			return both;
		});

		// Assert: 40 down to 1, each id once.
		const numbers = (list: { number: string }[]) => list.map(d => Number(d.number.slice(-6)));
		const descending = Array.from({ length: 40 }, (_, i) => 40 - i);
		expect(numbers(invoices)).toEqual(descending);
		expect(numbers(creditNotes)).toEqual(descending);
		expect(new Set(invoices.map(d => d.id)).size).toBe(40);
		expect(new Set(creditNotes.map(d => d.id)).size).toBe(40);
	});

	test("When lists are asked with a bad cursor or date range, then 400; a date range keeps only that range's invoices", async () => {
		await api().get("/invoices?cursor=nonsense").expect(400);
		await api().get("/credit-notes?from=2027-05-02&to=2027-05-01").expect(400);
		const none = await api().get("/invoices?from=2026-01-01&to=2026-01-31").expect(200);
		expect(none.body).toEqual({ data: [], nextCursor: null });
		const page = await api().get("/invoices?limit=1").expect(200);
		expect(page.body.nextCursor).toEqual(expect.any(String));
		const next = await api().get(`/invoices?limit=1&cursor=${page.body.nextCursor}`).expect(200);
		expect(next.body.data[0].id).not.toBe(page.body.data[0].id);
	});
});

function binary(res: NodeJS.ReadableStream & { setEncoding(e: string): void }, done: (err: Error | null, body: Buffer) => void) {
	const chunks: Buffer[] = [];
	res.on("data", (chunk: Buffer) => chunks.push(chunk));
	res.on("end", () => done(null, Buffer.concat(chunks)));
}
