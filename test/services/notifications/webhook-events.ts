// Webhook events as a merchant's buyers cause them (a checkout, an
// unsubscribe, through HTTP), or, for shapes no flow makes at will (an old
// createdAt, a repeat), as billing's outbox relay hands them over
// (notifications.enqueueAll); and what an operator sees of their deliveries
// through the admin API.
import { randomUUID } from "node:crypto";
import type { WebhookEvent } from "../../../shared/contracts/notifications";
import { formatDateTime } from "../../../shared/time";
import { type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer, type TestMerchant } from "../../factories/merchant";
import type { Envelope } from "../../factories/webhook-receiver";
import type { TestApp } from "../../setup/app";

/** An event as billing's outbox relay hands it over: the product's own type, every event type included. */
export type TestEvent = WebhookEvent;

export interface AttemptView {
	attempt: number;
	node: string;
	time: string;
	statusCode: number | null;
	latencyMs: number;
	error: string | null;
}

export interface DeliveryView {
	id: string;
	type: string;
	status: "PENDING" | "WAITING" | "DELIVERED" | "DEAD";
	attempts: number;
	nextAttemptAt: string | null;
	lastError: string | null;
	createdAt: string;
	deliveredAt: string | null;
	attemptLog: AttemptView[];
}

export function newEvent(merchant: TestMerchant, overrides: Partial<TestEvent> = {}): TestEvent {
	return {
		id: randomUUID(),
		type: "TRANSACTION",
		createdAt: formatDateTime(new Date()),
		accountId: merchant.accountId,
		customerId: 41,
		transaction_id: 97,
		data: { amount: 9.99, currency: "EUR", status: "APPROVED" },
		...overrides,
	};
}

/** What a sale sends, in its order: its CONVERSION and TRANSACTION, then its charge's INVOICE_ISSUED (docs/invoices.md). */
export const SALE_EVENTS = ["CONVERSION", "TRANSACTION", "INVOICE_ISSUED"];

/** A buyer's checkout of the shop's charge product, as the SDK sends it: billing writes its TRANSACTION and CONVERSION events, and issues its invoice. */
export async function sale(
	app: TestApp,
	shop: Shop,
): Promise<{ customerId: number; transaction: Envelope; conversion: Envelope; invoice: Envelope }> {
	const res = await submitCheckout(app, shop, { productId: shop.products.charge });
	if (res.body.code !== "OK") throw new Error(`checkout answered ${res.status} ${res.text}`);
	const customerId: number = res.body.customerId;
	const [conversion, transaction, invoice] = await eventsOf(app, shop, customerId, SALE_EVENTS);
	return { customerId, transaction, conversion, invoice };
}

/** The merchant unsubscribes its customer (POST /api/unsubscribe/{customerId}): billing writes a CANCELLATION. */
export async function unsubscribe(app: TestApp, merchant: TestMerchant, customerId: number): Promise<Envelope> {
	await app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(merchant)).expect(200);
	const events = await eventsOf(app, merchant, customerId, [...SALE_EVENTS, "CANCELLATION"]);
	return events[3];
}

/** The customer's events as GET /api/events lists them once stored, oldest first, waiting until they are these types. */
export async function eventsOf(app: TestApp, merchant: TestMerchant, customerId: number, types: string[]): Promise<Envelope[]> {
	return eventually(async () => {
		const res = await app.http().get(`/api/events?customerId=${customerId}&limit=100`).set(bearer(merchant)).expect(200);
		expect(res.body.data.map((e: Envelope) => e.type)).toEqual(types);
		return res.body.data as Envelope[];
	});
}

/** What billing's outbox relay does: hands events over in a batch. */
export function handOver(app: TestApp, ...events: TestEvent[]): Promise<{ accepted: number }> {
	return app.broker.call("notifications.enqueueAll", { events });
}

export async function setWebhookUrl(app: TestApp, merchant: TestMerchant, webhookUrl: string | null): Promise<void> {
	const res = await admin(app).patch(`/accounts/${merchant.accountId}`, { webhookUrl });
	if (res.status !== 200) throw new Error(`setWebhookUrl: ${res.status} ${res.text}`);
}

export async function deliveriesOf(app: TestApp, merchant: TestMerchant, status?: string): Promise<DeliveryView[]> {
	const query = status ? `?status=${status}` : "";
	const res = await admin(app).get(`/accounts/${merchant.accountId}/webhooks${query}`);
	if (res.status !== 200) throw new Error(`deliveriesOf: ${res.status} ${res.text}`);
	return res.body;
}

export async function deliveryOf(app: TestApp, merchant: TestMerchant, eventId: string): Promise<DeliveryView> {
	const found = (await deliveriesOf(app, merchant)).find(d => d.id === eventId);
	if (!found) throw new Error(`no delivery ${eventId}`);
	return found;
}

/** Retries `check` (an assertion) until it passes or `timeoutMs` is over; then its last error fails the test. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 10_000): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		try {
			return await check();
		} catch (err) {
			if (Date.now() > deadline) throw err;
			await new Promise(r => setTimeout(r, 50));
		}
	}
}
