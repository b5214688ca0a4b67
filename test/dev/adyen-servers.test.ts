// Prism serving Adyen's published Checkout API document (dev/adyen-servers.ts): it answers a
// valid request with the document's examples, refuses an invalid one with the document's 422 or
// 401, and its log says what was wrong. Spoken to over plain HTTP, as Adyen's API is.
import net from "node:net";
import path from "node:path";
import { adyenOpenApiDocument, type PrismServer, prismViolations, startPrism } from "../../dev/adyen-servers";
import { projectRoot } from "../../shared/paths";
import { pollUntil } from "../../shared/poll";

/** About 1 s on an idle machine, 10 s on a busy one. */
const START_TIMEOUT_MS = 90_000;

let prism: PrismServer | undefined;

beforeAll(async () => {
	const started = performance.now();
	prism = await startPrism();
	console.log(`Ready: Prism on Adyen's Checkout API in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}, START_TIMEOUT_MS);

afterAll(async () => {
	await prism?.stop();
});

/** A card payment as Adyen's card-direct example makes it: raw card details, a test card. */
function cardPayment(): Record<string, unknown> {
	return {
		merchantAccount: "TestMerchantAccount",
		amount: { currency: "EUR", value: 1999 },
		reference: "subscription-42-renewal-1",
		paymentMethod: { type: "scheme", number: "4111111111111111", expiryMonth: "03", expiryYear: "2030", cvc: "737" },
		returnUrl: "https://checkout.example.com/return",
	};
}

function postPayments(body: unknown, headers: Record<string, string> = { "X-API-Key": "test" }): Promise<Response> {
	return fetch(`${prism!.url}/payments`, {
		method: "POST",
		headers: { "Content-Type": "application/json", ...headers },
		body: JSON.stringify(body),
	});
}

/** Prism's violations once `expected` is among them: its log reaches us a few ms after its answer. */
async function violationsWith(expected: string): Promise<string[]> {
	await pollUntil(async () => prismViolations(prism!.log()).includes(expected) || undefined, { intervalMs: 20, timeoutMs: 5_000 });
	return prismViolations(prism!.log());
}

function accepts(url: string): Promise<boolean> {
	const { hostname, port } = new URL(url);
	return new Promise(resolve => {
		const socket = net.connect(Number(port), hostname, () => {
			socket.end();
			resolve(true);
		});
		socket.on("error", () => resolve(false));
	});
}

describe("adyenOpenApiDocument", () => {
	test("When ADYEN_OPENAPI_FILE is not set, then it is the document npm install put in .adyen", () => {
		expect(adyenOpenApiDocument({})).toBe(path.join(projectRoot, ".adyen", "CheckoutService-v71.json"));
	});

	test("When ADYEN_OPENAPI_FILE names nothing, then the error says so", () => {
		expect(() => adyenOpenApiDocument({ ADYEN_OPENAPI_FILE: "/nowhere/CheckoutService-v71.json" })).toThrow(
			"ADYEN_OPENAPI_FILE is /nowhere/CheckoutService-v71.json, which does not exist",
		);
	});
});

describe("prismViolations", () => {
	test("When a log holds validator errors among other lines, then only those errors are returned, without colours", () => {
		// Arrange
		const log = [
			"[3:29:16 AM] › [HTTP SERVER] post /payments ℹ  info      Request received",
			"[3:29:16 AM] ›     [VALIDATOR] ⚠  warning   Request did not pass the validation rules",
			"\u001b[90m[3:29:16 AM]\u001b[39m ›     [VALIDATOR] \u001b[31m✖ \u001b[39m \u001b[31m\u001b[4merror\u001b[24m    \u001b[39m Request body must have required property 'reference'",
			'[3:29:17 AM] ›     [NEGOTIATOR] ℹ  info      > Responding with "422"',
		].join("\n");

		// Act
		const violations = prismViolations(log);

		// Assert
		expect(violations).toEqual(["Request body must have required property 'reference'"]);
	});
});

describe("Prism on Adyen's Checkout API", () => {
	test("When a valid card payment is posted, then it answers 200 with the card-direct example: Authorised", async () => {
		// Act
		const res = await postPayments(cardPayment());

		// Assert
		expect(res.status).toBe(200);
		expect(await res.json()).toMatchObject({ resultCode: "Authorised", pspReference: "993617895204576J" });
	});

	test("When Prefer names the subscription-first-transaction example, then that example answers", async () => {
		// Act
		const res = await postPayments(cardPayment(), { "X-API-Key": "test", Prefer: "example=subscription-first-transaction" });

		// Assert
		expect(res.status).toBe(200);
		expect(await res.json()).toMatchObject({
			resultCode: "Authorised",
			additionalData: { recurringProcessingModel: "Subscription", "recurring.recurringDetailReference": expect.any(String) },
		});
	});

	test("When the body lacks merchantAccount, then it answers 422 and its log names the missing property", async () => {
		// Arrange
		const { merchantAccount: _, ...body } = cardPayment();

		// Act
		const res = await postPayments(body);

		// Assert
		expect(res.status).toBe(422);
		expect(await res.json()).toMatchObject({ status: 422, errorType: "validation" });
		const expected = "Violation: request.body Request body must have required property 'merchantAccount'";
		expect(await violationsWith(expected)).toContain(expected);
	});

	test("When no X-API-Key is sent, then it answers 401", async () => {
		// Act
		const res = await postPayments(cardPayment(), {});

		// Assert
		expect(res.status).toBe(401);
		expect(await res.json()).toMatchObject({ status: 401, errorType: "security" });
		const expected = "Violation: request Invalid security scheme used";
		expect(await violationsWith(expected)).toContain(expected);
	});

	test("When it is stopped, then its port no longer accepts connections", async () => {
		// Arrange
		const { url } = prism!;
		expect(await accepts(url)).toBe(true);

		// Act
		await prism!.stop();
		prism = undefined;

		// Assert
		expect(await accepts(url)).toBe(false);
	});
});
