// Events as billing sends them (notifications.enqueue), and what an operator
// sees of their deliveries through the admin API.
import { randomUUID } from "node:crypto";
import { formatDateTime } from "../../../shared/time";
import { admin, type TestMerchant } from "../../factories/merchant";
import type { TestApp } from "../../setup/app";

export interface TestEvent {
	id: string;
	type: "TRANSACTION" | "CONVERSION" | "REFUND" | "CANCELLATION" | "SUSPENSION";
	createdAt: string;
	accountId: number;
	customerId: number;
	transaction_id: number | null;
	data: Record<string, unknown>;
}

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

/** What billing's outbox relay does. */
export function enqueue(app: TestApp, event: TestEvent): Promise<{ accepted: boolean }> {
	return app.broker.call("notifications.enqueue", event);
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
