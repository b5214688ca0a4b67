// GET /api/customers, /api/transactions and /api/customer/{id}/transactions
// (issue 17): newest first, filtered, paged by an opaque cursor, scoped to
// the token's account.
import { CARDS, createShop, type Shop, submitCheckout, uniqueEmail } from "../../factories/checkout";
import { bearer } from "../../factories/merchant";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let shop: Shop;
let other: Shop;

beforeAll(async () => {
	app = await startApp({ services: ["gateway", "accounts", "sessions", "checkout", "payments", "billing", "refunds"] });
	[shop, other] = await Promise.all([createShop(app), createShop(app)]);
});
afterAll(() => app.stop());

const get = (path: string, who: Shop = shop) => app.http().get(`/api${path}`).set(bearer(who));

async function checkout(options: { productId?: number; card?: string; email?: string; who?: Shop } = {}): Promise<number> {
	const who = options.who ?? shop;
	const res = await submitCheckout(app, who, {
		productId: options.productId ?? who.products.charge,
		card: options.card,
		email: options.email,
	});
	if (typeof res.body.customerId !== "number") throw new Error(`checkout answered ${res.status} ${res.text}`);
	return res.body.customerId as number;
}

/** Every item of a list, page after page. */
async function all(path: string, limit: number, who: Shop = shop): Promise<{ id: number }[]> {
	const items: { id: number }[] = [];
	let cursor: string | null = null;
	do {
		const sep = path.includes("?") ? "&" : "?";
		const res: { body: { data: { id: number }[]; nextCursor: string | null } } = await get(
			`${path}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`,
			who,
		).expect(200);
		items.push(...res.body.data);
		cursor = res.body.nextCursor;
	} while (cursor);
	return items;
}

describe("GET /api/customers", () => {
	let email: string;
	let ids: number[];

	beforeAll(async () => {
		email = uniqueEmail();
		ids = [];
		// The same email twice, in two letter cases, on two products (a product allows one subscription per email and card).
		for (let i = 0; i < 5; i++) {
			ids.push(
				await checkout({
					email: i === 2 ? email.toUpperCase() : i === 4 ? email : undefined,
					productId: i === 4 ? shop.products.preauthorize : undefined,
				}),
			);
		}
	});

	test("When a merchant lists its customers, then newest first, each exactly as GET /api/customer/{id} shows it", async () => {
		// Act
		const res = await get("/customers?limit=5").expect(200);

		// Assert
		expect(res.body.data.map((c: { id: number }) => c.id)).toEqual([...ids].reverse());
		expect(res.body.data[0]).toEqual((await get(`/customer/${ids[4]}`)).body);
		expect(typeof res.body.nextCursor === "string" || res.body.nextCursor === null).toBe(true);
	});

	test("When the pages are followed with a small limit, then every customer once, in order, and the last cursor is null", async () => {
		const listed = await all("/customers", 2);

		expect(listed.map(c => c.id).slice(0, 5)).toEqual([...ids].reverse());
		expect(new Set(listed.map(c => c.id)).size).toBe(listed.length);
	});

	test("When customers sign up while a merchant pages, then no page skips or repeats a customer that existed before", async () => {
		// Arrange
		const before = (await all("/customers", 100)).map(c => c.id);
		const first = await get("/customers?limit=2").expect(200);

		// Act
		const adding = Promise.all([checkout(), checkout(), checkout()]);
		const seen = [...first.body.data.map((c: { id: number }) => c.id)];
		let cursor: string | null = first.body.nextCursor;
		while (cursor) {
			const page = await get(`/customers?limit=2&cursor=${cursor}`).expect(200);
			seen.push(...page.body.data.map((c: { id: number }) => c.id));
			cursor = page.body.nextCursor;
		}
		const added = await adding;

		// Assert
		expect(seen).toEqual(before);
		expect(seen.some(id => added.includes(id))).toBe(false);
	});

	test("When filtered by email in another letter case, then only that email's customers", async () => {
		const res = await get(`/customers?email=${encodeURIComponent(email.replace("buyer", "BUYER"))}`).expect(200);

		expect(res.body.data.map((c: { id: number }) => c.id)).toEqual([ids[4], ids[2]]);
		expect(res.body.nextCursor).toBeNull();
	});

	test("When filtered by status and product, then only customers with both", async () => {
		// Arrange
		expect((await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.insufficientFunds })).body.code).toBe(
			"PAYMENT_DECLINED",
		);
		const scheduled = await checkout({ productId: shop.products.schedule });

		// Act
		const byStatus = await all("/customers?status=DECLINED", 20);
		const byProduct = await all(`/customers?productId=${shop.products.schedule}`, 20);
		const both = await all(`/customers?productId=${shop.products.charge}&status=ACTIVE`, 20);

		// Assert
		expect(byStatus).toEqual([expect.objectContaining({ status: "DECLINED", productId: shop.products.charge })]);
		const declined = byStatus[0].id;
		expect(byProduct.map(c => c.id)).toEqual([scheduled]);
		expect(both.every(c => (c as { status?: string; productId?: number }).status === "ACTIVE")).toBe(true);
		expect(both.map(c => c.id)).toEqual(expect.arrayContaining(ids.slice(0, 4)));
		expect(both.map(c => c.id)).not.toContain(declined);
	});

	test("When filtered by a signup date range, then a range holding today lists today's customers and others list none", async () => {
		// Arrange
		const today = String((await get(`/customer/${ids[0]}`)).body.subscriptionTimestamp).slice(0, 10);
		const day = (offset: number) => new Date(Date.parse(`${today}T12:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);

		// Act
		const inRange = await all(`/customers?from=${day(-1)}&to=${today}`, 50);
		const before = await get(`/customers?to=${day(-1)}`).expect(200);
		const after = await get(`/customers?from=${day(1)}`).expect(200);

		// Assert
		expect(inRange.map(c => c.id)).toEqual(expect.arrayContaining(ids));
		expect(before.body).toEqual({ data: [], nextCursor: null });
		expect(after.body).toEqual({ data: [], nextCursor: null });
	});

	test("When another account lists customers, then it sees none of this account's", async () => {
		const theirs = await checkout({ who: other });

		const listed = (await all("/customers", 100, other)).map(c => c.id);

		expect(listed).toEqual([theirs]);
		expect(listed.some(id => ids.includes(id))).toBe(false);
	});
});

describe("GET /api/transactions and /api/customer/{id}/transactions", () => {
	test("When a customer has a charge and a refund, then both are listed newest first, filterable by type, status and customer", async () => {
		// Arrange
		const customerId = await checkout({ productId: shop.products.oneOff });
		const [charge] = (await get(`/customer/${customerId}/transactions`).expect(200)).body.data;
		await get(`/refund/${charge.id}?amountToRefund=5`).expect(200);
		expect((await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.insufficientFunds })).body.code).toBe(
			"PAYMENT_DECLINED",
		);

		// Act
		const ofCustomer = await get(`/customer/${customerId}/transactions`).expect(200);
		const viaFilter = await get(`/transactions?customerId=${customerId}`).expect(200);
		const refunds = await all("/transactions?type=REFUNDED", 20);
		const declined = await all("/transactions?status=DECLINED", 20);
		const newest = await get("/transactions?limit=1").expect(200);

		// Assert
		expect(ofCustomer.body.data.map((t: { type: string }) => t.type)).toEqual(["REFUNDED", charge.type]);
		expect(ofCustomer.body.data[1]).toEqual((await get(`/transaction/${charge.id}`)).body);
		expect(viaFilter.body.data).toEqual(ofCustomer.body.data);
		expect(refunds.map(t => t.id)).toContain(ofCustomer.body.data[0].id);
		expect(declined.length).toBeGreaterThanOrEqual(1);
		expect(declined.every(t => (t as { status?: string }).status === "DECLINED")).toBe(true);
		expect(newest.body.data).toHaveLength(1);
		expect(newest.body.nextCursor).toEqual(expect.any(String));
	});

	test("When a customer of another account is named, then its transactions are not listed", async () => {
		const theirs = await checkout({ who: other });

		const res = await get(`/customer/${theirs}/transactions`).expect(200);
		const filtered = await get(`/transactions?customerId=${theirs}`).expect(200);

		expect(res.body).toEqual({ data: [], nextCursor: null });
		expect(filtered.body).toEqual({ data: [], nextCursor: null });
	});
});

describe("Bad cursors and filters", () => {
	let cursor: string;

	beforeAll(async () => {
		await checkout();
		await checkout();
		cursor = (await get("/customers?limit=1").expect(200)).body.nextCursor;
	});

	test.each([
		["a cursor of another account", () => get(`/customers?cursor=${cursor}`, other), "cursor was given for another list"],
		["a cursor made for other filters", () => get(`/customers?status=ACTIVE&cursor=${cursor}`), "cursor was given for another list"],
		["a customers cursor on transactions", () => get(`/transactions?cursor=${cursor}`), "cursor was given for another list"],
		["a malformed cursor", () => get("/customers?cursor=not-a-cursor"), "cursor is not one this API gave out"],
		["a tampered cursor", () => get(`/customers?cursor=${cursor.slice(0, -3)}`), ""],
		["limit 0", () => get("/customers?limit=0"), "limit"],
		["limit 101", () => get("/customers?limit=101"), "limit"],
		["limit 2.5", () => get("/customers?limit=2.5"), "limit"],
		["an unknown status", () => get("/customers?status=HAPPY"), "status"],
		["an unknown type", () => get("/transactions?type=GIFT"), "type"],
		["a date that does not exist", () => get("/customers?from=2026-02-30"), "from and to must be dates"],
		["a date in another format", () => get("/customers?from=24.11.2026"), "from"],
		["from after to", () => get("/customers?from=2026-11-24&to=2026-11-23"), "from and to must be dates"],
		["an email of blanks", () => get("/customers?email=%20%20"), "email"],
		["an unknown filter", () => get("/customers?sort=asc"), "sort"],
		["the filter twice", () => get("/customers?status=ACTIVE&status=DECLINED"), "status"],
	])("When a list is asked with %s, then 400 BAD_REQUEST saying what is wrong", async (_, send, message) => {
		const res = await send();

		expect(res.status).toBe(400);
		expect(res.body).toEqual({ error: "BAD_REQUEST", status: 400, message: expect.stringContaining(message) });
	});
});
