// Adyen's standard notifications reach us through the MID's own endpoint,
// POST /api/processors/adyen/{midId}/notifications (docs/api.md#adyen-notifications).
// A sandbox account's Adyen MIDs (with an HMAC key) charge real checkouts on
// Prism serving Adyen's Checkout API document; the notifications are built
// from the documented example the official library ships (its HMAC tool's
// payload), signed with a test HMAC key by
// the library's own validator, and posted over HTTP.
import { readFileSync } from "node:fs";
import path from "node:path";
import { hmacValidator } from "@adyen/api-library";
import { projectRoot } from "../../../shared/paths";
import { ADYEN_KEYS, type AdyenApp, startAdyenApp } from "../../factories/adyen-app";
import { createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer } from "../../factories/merchant";
import type { PrismRecorder } from "../../factories/prism-recorder";
import type { TestApp } from "../../setup/app";
import { eventually } from "../notifications/webhook-events";

jest.setTimeout(90_000);

const OTHER_HMAC_KEY = "0011223344556677889900AABBCCDDEEFF0011223344556677889900AABBCCDD";
const MERCHANT_ACCOUNT = "ShopComNotices";

/** The documented AUTHORISATION notification, as the library ships it. */
const EXAMPLE = JSON.parse(readFileSync(path.join(projectRoot, "node_modules/@adyen/api-library/tools/hmac/payload.json"), "utf8"))
	.notificationItems[0].NotificationRequestItem as Record<string, unknown> & { additionalData: Record<string, string> };

let unique = 0;
/** A pspReference of Adyen's shape (16 characters), unique per call. */
const pspReference = () =>
	`T${Date.now().toString(36).toUpperCase()}${(++unique).toString().padStart(4, "0")}`.slice(0, 16).padEnd(16, "0");

interface Charge {
	customerId: number;
	transactionId: number;
	/** The MID the checkout was routed to: its endpoint is the one Adyen notifies. */
	midId: number;
	/** The reference our connector sent with the payment: our key. */
	merchantReference: string;
}

describe("Adyen's notifications for a MID, over HTTP", () => {
	let started: AdyenApp;
	let recorder: PrismRecorder;
	let app: TestApp;
	let shop: Shop;

	beforeAll(async () => {
		started = await startAdyenApp({ REQUEST_TIMEOUT_MS: "3000", REFUND_RECOVERY_GRACE_MS: "4000", REFUND_RECOVERY_INTERVAL_MS: "250" });
		({ recorder, app } = started);
		shop = await createShop(app, { processor: { type: "adyen", ...ADYEN_KEYS, merchantAccount: MERCHANT_ACCOUNT } });
		// Every checkout here pays with the same card: a dispute would otherwise block it for the next (docs/disputes.md#protection).
		await admin(app)
			.patch(`/accounts/${shop.accountId}`, { disputeProtection: { blockCard: false } })
			.expect(200);
	}, 120_000);
	afterAll(() => started?.stop());
	afterEach(() => {
		recorder.prefer = () => undefined;
	});

	const api = (p: string) => app.http().get(p).set(bearer(shop));

	async function charged(): Promise<Charge> {
		const before = recorder.exchanges.length;
		const res = await submitCheckout(app, shop, { productId: shop.products.charge });
		expect(res.body.code).toBe("OK");
		const [tx] = (await admin(app).get(`/accounts/${shop.accountId}/customers/${res.body.customerId}/transactions`).expect(200)).body;
		const payment = recorder.exchanges
			.slice(before)
			.find(e => e.path === "/payments" && (e.body.amount as { value: number }).value === 999);
		return { customerId: res.body.customerId, transactionId: tx.id, midId: tx.midId, merchantReference: String(payment?.body.reference) };
	}

	/** One notification item as Adyen sends it, signed with `key` (null: no signature). */
	function item(fields: Record<string, unknown>, key: string | null = ADYEN_KEYS.hmacKey) {
		const built = {
			...EXAMPLE,
			merchantAccountCode: MERCHANT_ACCOUNT,
			pspReference: pspReference(),
			eventDate: new Date().toISOString(),
			reason: "",
			...fields,
			additionalData: { ...EXAMPLE.additionalData, ...((fields.additionalData as object) ?? {}) },
		} as Record<string, unknown> & { additionalData: Record<string, string> };
		delete built.additionalData.hmacSignature;
		if (key !== null) built.additionalData.hmacSignature = new hmacValidator().calculateHmac(built as never, key);
		return built;
	}

	/** The dispute's stage for a charge: the disputed payment's pspReference names it through its stages. */
	const stage = (charge: Charge, disputed: string, eventCode: string, extra: Record<string, unknown> = {}) =>
		item({
			eventCode,
			merchantReference: charge.merchantReference,
			originalReference: disputed,
			amount: { currency: "EUR", value: 999 },
			reason: "Fraudulent Processing of Transactions",
			success: "true",
			...extra,
		});

	const deliver = (midId: number, items: object[], live = "false") =>
		app
			.http()
			.post(`/api/processors/adyen/${midId}/notifications`)
			.set("Content-Type", "application/json")
			.send(JSON.stringify({ live, notificationItems: items.map(NotificationRequestItem => ({ NotificationRequestItem })) }));

	const disputesOf = async (transactionId: number) =>
		(await api("/api/disputes?limit=100").expect(200)).body.data.filter(
			(d: { disputedTransactionId: number }) => d.disputedTransactionId === transactionId,
		) as Record<string, unknown>[];

	test("When Adyen notifies a chargeback and then its reversal, then the charge's dispute opens NEEDS_RESPONSE with Adyen's amount, reason and defence date, and is WON; each request answers [accepted]", async () => {
		// Arrange
		const charge = await charged();
		const disputed = pspReference();
		const due = new Date(Date.now() + 10 * 86_400_000).toISOString();

		// Act
		const opened = await deliver(shop.mids[0], [
			stage(charge, disputed, "CHARGEBACK", { additionalData: { defensePeriodEndsAt: due, defendable: "true" } }),
		]);
		const openedDispute = (await disputesOf(charge.transactionId))[0];
		const reversed = await deliver(shop.mids[0], [stage(charge, disputed, "CHARGEBACK_REVERSED")]);

		// Assert
		expect([opened.status, opened.body, reversed.status]).toEqual([200, { notificationResponse: "[accepted]" }, 200]);
		expect(openedDispute).toMatchObject({
			status: "NEEDS_RESPONSE",
			amount: 9.99,
			currency: "EUR",
			processorReference: disputed,
		});
		expect(openedDispute.reason).toBe("Fraudulent Processing of Transactions");
		// In the API's time zone (TIME_ZONE): the same instant.
		expect(String(openedDispute.evidenceDueBy).slice(13)).toBe(due.slice(13, 23));
		expect((await disputesOf(charge.transactionId)).map(d => d.status)).toEqual(["WON"]);
	});

	test("When a notification is replayed, or a dispute's stages come out of order, then nothing changes a second time and a late stage never moves it back", async () => {
		// Arrange
		const charge = await charged();
		const disputed = pspReference();
		const lost = stage(charge, disputed, "SECOND_CHARGEBACK");

		// Act
		await deliver(charge.midId, [lost]).expect(200);
		await deliver(charge.midId, [lost]).expect(200);
		await deliver(charge.midId, [stage(charge, disputed, "NOTIFICATION_OF_CHARGEBACK")]).expect(200);

		// Assert
		const [dispute] = await disputesOf(charge.transactionId);
		expect(dispute).toMatchObject({ status: "LOST" });
		const transactions = (await api(`/api/customer/${charge.customerId}/transactions`).expect(200)).body.data as { type: string }[];
		expect(transactions.filter(t => t.type === "CHARGEBACK")).toHaveLength(1);
	});

	test("When a notification is unsigned, signed with another key, or not a notification, then 400 and nothing is applied; one for another merchant account or the live platform is accepted and changes nothing", async () => {
		// Arrange
		const charge = await charged();
		const chargeback = (extra: Record<string, unknown> = {}, key: string | null = ADYEN_KEYS.hmacKey) =>
			item(
				{
					eventCode: "CHARGEBACK",
					merchantReference: charge.merchantReference,
					amount: { currency: "EUR", value: 999 },
					success: "true",
					...extra,
				},
				key,
			);

		// Act
		const answers = [
			await deliver(shop.mids[0], [chargeback({}, null)]),
			await deliver(shop.mids[0], [chargeback({}, OTHER_HMAC_KEY)]),
			await deliver(shop.mids[0], [chargeback(), chargeback({}, OTHER_HMAC_KEY)]),
			await app
				.http()
				.post(`/api/processors/adyen/${shop.mids[0]}/notifications`)
				.set("Content-Type", "application/json")
				.send('{"live":"false"}'),
		];
		const accepted = [
			await deliver(charge.midId, [chargeback({ merchantAccountCode: "AnotherMerchant" })]),
			await deliver(charge.midId, [chargeback()], "true"),
		];

		// Assert
		expect(answers.map(res => [res.status, res.body.message])).toEqual([
			[400, "An item has no hmacSignature, or one this merchant account's HMAC key did not make: nothing was applied"],
			[400, "An item has no hmacSignature, or one this merchant account's HMAC key did not make: nothing was applied"],
			[400, "An item has no hmacSignature, or one this merchant account's HMAC key did not make: nothing was applied"],
			[400, "The body is not an Adyen notification request"],
		]);
		expect(accepted.map(res => res.status)).toEqual([200, 200]);
		expect(await disputesOf(charge.transactionId)).toEqual([]);
	});

	test("When a MID is not on Adyen, or has no HMAC key, then its notifications are refused with 400", async () => {
		// Arrange
		const sandboxShop = await createShop(app);
		const noKey = await createShop(app, { processor: { type: "adyen", apiKey: ADYEN_KEYS.apiKey, merchantAccount: MERCHANT_ACCOUNT } });

		// Act
		const answers = [
			await deliver(sandboxShop.mids[0], [item({ eventCode: "CHARGEBACK" })]),
			await deliver(noKey.mids[0], [item({ eventCode: "CHARGEBACK" })]),
		];

		// Assert
		expect(answers.map(res => [res.status, res.body.message])).toEqual([
			[400, "This merchant account is not on Adyen: it takes no Adyen notifications"],
			[400, "This merchant account has no HMAC key (processor.hmacKey): its notifications cannot be verified"],
		]);
	});

	test("When Adyen's answer to a first payment is lost (a 500), then the buyer is not charged again, and Adyen's AUTHORISATION notification settles the checkout as paid", async () => {
		// Arrange: Adyen's documented 500 for the charge, after the card's verification passed.
		recorder.prefer = (p, body) => (p === "/payments" && (body.amount as { value: number }).value === 999 ? "code=500" : undefined);
		const paidBefore = new Set(((await api("/api/customers?limit=100").expect(200)).body.data as { id: number }[]).map(c => c.id));
		const before = recorder.exchanges.length;
		const res = await submitCheckout(app, shop, { productId: shop.products.charge });
		recorder.prefer = () => undefined;
		const payment = recorder.exchanges
			.slice(before)
			.find(e => e.path === "/payments" && (e.body.amount as { value: number }).value === 999)!;
		expect(payment.status).toBe(500);
		// Act: to either MID: they share the Adyen merchant account, and may share its webhook.
		await deliver(shop.mids[0], [
			item({
				eventCode: "AUTHORISATION",
				merchantReference: payment.body.reference,
				amount: { currency: "EUR", value: 999 },
				success: "true",
			}),
		]).expect(200);

		// Assert: the sweep looks the payment up, and Adyen's word settles it.
		const customer = await eventually(async () => {
			const found = (await api("/api/customers?limit=100").expect(200)).body.data.find(
				(c: { id: number; status: string }) =>
					c.id === res.body.customerId || (!res.body.customerId && c.status === "ACTIVE" && !paidBefore.has(c.id)),
			);
			expect(found?.status).toBe("ACTIVE");
			return found;
		}, 20_000);
		const charges = recorder.exchanges
			.slice(before)
			.filter(e => e.path === "/payments" && (e.body.amount as { value: number }).value === 999);
		expect(charges).toHaveLength(1);
		const transactions = (await api(`/api/customer/${customer.id}/transactions`).expect(200)).body.data as {
			type: string;
			status: string;
		}[];
		expect(transactions.map(t => [t.type, t.status])).toEqual([["SUBSCRIPTION_START", "APPROVED"]]);
	});
});
