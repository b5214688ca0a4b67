// Invoices and credit notes (issue 37, docs/invoices.md) of payments made on Stripe: a production account whose MIDs
// are on Stripe, the Stripe connector talking to localstripe (STRIPE_API_BASE), which keeps state. Each document
// carries the references of the processor's operation it is for, read back from localstripe with the official library.
import type Stripe from "stripe";
import { CARDS, type Shop, submitCheckout } from "../../factories/checkout";
import { type LocalstripeShop, startLocalstripeShop } from "../../factories/localstripe-shop";
import { bearer } from "../../factories/merchant";
import type { TestApp } from "../../setup/app";
import { eventually } from "../notifications/webhook-events";

jest.setTimeout(60_000);

describe("Invoices on localstripe", () => {
	let stripe: Stripe;
	let app: TestApp;
	let shop: Shop;

	let started: LocalstripeShop;

	beforeAll(async () => {
		started = await startLocalstripeShop();
		({ stripe, app, shop } = started);
	}, 120_000);
	afterAll(() => started?.stop());

	const get = (path: string) => app.http().get(`/api${path}`).set(bearer(shop));

	test("When a buyer pays on Stripe and is refunded in part, then the invoice names the PaymentIntent and the credit note the Refund, each as Stripe holds it", async () => {
		// Arrange
		const paid = await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.visa });
		expect(paid.body.code).toBe("OK");
		const customerId = paid.body.customerId as number;
		const [charge] = (await get(`/customer/${customerId}/transactions`).expect(200)).body.data;

		// Act
		const refunded = await get(`/refund/${charge.id}?amountToRefund=2.50`).set("Idempotency-Key", `stripe-invoice-${customerId}`);

		// Assert
		expect(refunded.body).toMatchObject({ success: true });
		const [invoice] = await eventually(async () => {
			const page = (await get(`/invoices?customerId=${customerId}`).expect(200)).body.data;
			expect(page).toHaveLength(1);
			return page;
		});
		const intent = await stripe.paymentIntents.retrieve(invoice.processorReference);
		expect(intent).toMatchObject({ status: "succeeded", amount: Math.round(invoice.total * 100), currency: "eur" });
		expect(invoice).toMatchObject({ transactionId: charge.id, processorReference: charge.processorReference, total: 9.99 });
		const [note] = await eventually(async () => {
			const page = (await get(`/credit-notes?customerId=${customerId}`).expect(200)).body.data;
			expect(page).toHaveLength(1);
			return page;
		});
		expect(note).toMatchObject({ invoiceId: invoice.id, invoiceNumber: invoice.number, total: 2.5 });
		const refund = await stripe.refunds.retrieve(note.processorReference);
		expect(refund).toMatchObject({ payment_intent: intent.id, amount: 250, status: "succeeded" });
	});
});
