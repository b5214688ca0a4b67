// The traffic the transporter fault tests (nats-restart, nats-cluster) send
// while they break things: buyers who open a session and pay, then every
// third unsubscribes and every third refunds in full. Each request's answer
// goes through `send`, which the test makes record it; what was acknowledged
// is kept for the test's checks afterwards.
import { CARDS, checkoutBody, type Shop } from "../../factories/checkout";
import { admin, bearer } from "../../factories/merchant";
import type { TestApp } from "../../setup/app";

export type Request = ReturnType<ReturnType<TestApp["http"]>["get"]>;
export interface Answer {
	status: number;
	body: Record<string, unknown>;
	text?: string;
}

/** The answer, or status 0 when none came within `hangAfterMs` (a hang: the gateway must answer well before). */
export async function answerWithin(request: Request, hangAfterMs: number): Promise<Answer> {
	return request
		.timeout(hangAfterMs)
		.catch((err: { response?: Answer }) => err.response ?? { status: 0, body: { hang: String(err) } }) as Promise<Answer>;
}

export interface Acknowledged {
	checkouts: number[];
	refunds: number[];
	unsubscribes: number[];
	/** Customers whose unsubscribe was answered otherwise than 200: it may have happened or not (its answer lost in the gap). */
	unanswered: Set<number>;
}

export const nothingAcknowledged = (): Acknowledged => ({ checkouts: [], refunds: [], unsubscribes: [], unanswered: new Set() });

/** Buyer `n`'s loop, until `running()` turns false. */
export async function buyer(
	app: TestApp,
	shop: Shop,
	n: number,
	options: { send: (request: Request) => Promise<Answer>; running: () => boolean; acknowledged: Acknowledged },
): Promise<void> {
	const { send, acknowledged } = options;
	for (let i = 0; options.running(); i++) {
		const session = await send(app.http().post("/api/session?domain=shop.example.com").set(bearer(shop)));
		if (session.status !== 200) {
			// A client tries again after a moment, not in a tight loop.
			await new Promise(r => setTimeout(r, 50));
			continue;
		}
		const body = await checkoutBody(app, shop, { productId: shop.products.charge, card: CARDS.visa, sessionId: session.text });
		const res = await send(app.http().post("/api/checkout").send(body));
		if (res.status !== 200 || res.body.code !== "OK") continue;
		const customerId = res.body.customerId as number;
		acknowledged.checkouts.push(customerId);
		if ((n + i) % 3 === 0) {
			const unsubscribed = await send(app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(shop)));
			if (unsubscribed.status === 200 && unsubscribed.body.success) acknowledged.unsubscribes.push(customerId);
			else acknowledged.unanswered.add(customerId);
		} else if ((n + i) % 3 === 1) {
			const list = await send(admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`));
			const charge = list.status === 200 ? (list.body as unknown as { id: number }[])[0] : undefined;
			if (!charge) continue;
			const refunded = await send(app.http().get(`/api/refund/${charge.id}`).set(bearer(shop)));
			if (refunded.status === 200 && refunded.body.success) acknowledged.refunds.push(customerId);
		}
	}
}

/** Only what docs/operations.md promises in a transporter outage: an answer (no hang), 200 or 503 SERVICE_UNAVAILABLE. */
export function expectOnlyDocumentedAnswers(answers: Answer[]): void {
	expect(answers.filter(a => a.status === 0)).toEqual([]);
	expect(answers.filter(a => a.status !== 200 && a.status !== 503)).toEqual([]);
	expect(answers.filter(a => a.status === 503 && a.body.error !== "SERVICE_UNAVAILABLE")).toEqual([]);
}
