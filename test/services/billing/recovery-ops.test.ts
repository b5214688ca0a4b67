// What operators see of recovery: the admin API's list of customers in
// recovery with the monthly recovery rate, and the node's Prometheus counters.
import { freePort } from "../../../dev/net";
import { CARDS, createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, advanceClock } from "../../factories/merchant";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let metricsPort: number;

beforeAll(async () => {
	metricsPort = await freePort();
	app = await startApp({ env: { METRICS_PORT: String(metricsPort) } });
});
afterAll(() => app.stop());

const advance = (shop: Shop, days: number) => advanceClock(app, shop, days);
const subscribe = async (shop: Shop, card: string) =>
	(await submitCheckout(app, shop, { productId: shop.products.charge, card })).body.customerId as number;

/** A counter's value on the node's /metrics (Prometheus text), summed over its label sets. */
async function counter(name: string): Promise<number> {
	const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
	return text
		.split("\n")
		.filter(line => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
		.reduce((sum, line) => sum + Number(line.split(" ").pop()), 0);
}

describe("Customers in recovery", () => {
	test("When renewals are declined and one recovers, then the list shows who is retrying or suspended, and the month's rate and revenue recovered", async () => {
		// Arrange: a soft decline, a hard decline, a card that recovers on the second retry, and one that renews.
		const shop = await createShop(app);
		const retrying = await subscribe(shop, CARDS.renewalsInsufficientFunds);
		const suspended = await subscribe(shop, CARDS.renewalsLostCard);
		await subscribe(shop, CARDS.renewalsDeclinedTwice);
		await subscribe(shop, CARDS.visa);
		const before = {
			entered: await counter("billing_recovery_entered"),
			recovered: await counter("billing_recovery_recovered"),
		};

		// Act: the renewals, then the retries on days 1 and 3.
		for (const days of [31, 32.1, 34.2]) await advance(shop, days);
		const res = await admin(app).get(`/accounts/${shop.accountId}/recovery`);

		// Assert
		expect(res.status).toBe(200);
		expect(res.body.customers.map((c: { customer: { id: number }; state: string }) => [c.customer.id, c.state])).toEqual([
			[suspended, "SUSPENDED"],
			[retrying, "RETRYING"],
		]);
		const total = (res.body.months as { entered: number; recovered: number; revenueRecovered: Record<string, number> }[]).reduce(
			(sum, m) => ({
				entered: sum.entered + m.entered,
				recovered: sum.recovered + m.recovered,
				eur: sum.eur + (m.revenueRecovered.EUR ?? 0),
			}),
			{ entered: 0, recovered: 0, eur: 0 },
		);
		expect(total).toEqual({ entered: 3, recovered: 1, eur: 9.99 });
		expect(res.body.months[0]).toHaveProperty("rate");
		expect(await counter("billing_recovery_entered")).toBe(before.entered + 3);
		expect(await counter("billing_recovery_recovered")).toBe(before.recovered + 1);
	});

	test("When an account has no customer in recovery, then the list is empty", async () => {
		const shop = await createShop(app);

		const res = await admin(app).get(`/accounts/${shop.accountId}/recovery`).expect(200);

		expect(res.body).toEqual({ customers: [], months: [] });
	});

	test("When the account is unknown, then 404", async () => {
		const res = await admin(app).get("/accounts/987654321/recovery");

		expect(res.status).toBe(404);
	});
});
