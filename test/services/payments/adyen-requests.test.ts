// What the Adyen connector asks of Adyen, as a pure function: the one case the test
// servers cannot show. stripe-mock's first payments carry no network transaction id,
// and Prism's examples none either, so a renewal moved to Adyen from another
// processor never has one to send there (cross-processor.test.ts); here it does.
import { paymentRequest } from "../../../services/payments/connectors/adyen/payments";
import { adyenOperation, PURE_APIS } from "../../factories/adyen-app";

const apis = PURE_APIS;
const op = adyenOperation("renewal:7:2026-12-01T00:00:00.000Z:0");
const RETURN = "https://pay.example.com/api/processors/adyen/returns/2kFy0pQe8RkqC5cZk0A9c0h5bWl6n2mHc1xCq9uQ7xY";

describe("The connector's /payments requests", () => {
	test("When a renewal's card is not stored at the merchant account, then the card is sent merchant-initiated with the network transaction id of its first payment", () => {
		// Act
		const request = paymentRequest(apis, op, { initiator: "merchant", hold: false, networkTransactionId: "MCC012345678901" }, null, RETURN);

		// Assert
		expect(request).toMatchObject({
			shopperInteraction: "ContAuth",
			recurringProcessingModel: "Subscription",
			paymentMethod: { type: "scheme", number: "4111111111111111", expiryMonth: "03", expiryYear: "2030" },
			additionalData: { networkTxReference: "MCC012345678901" },
		});
		expect(request).not.toHaveProperty("storePaymentMethod");
	});

	test("When the card is stored there, then the stored card is charged and no network id is sent (Adyen keeps it)", () => {
		// Act
		const request = paymentRequest(
			apis,
			op,
			{ initiator: "merchant", hold: false, networkTransactionId: "MCC012345678901" },
			"9916178934434753",
			RETURN,
		);

		// Assert
		expect(request.paymentMethod).toEqual({ type: "scheme", storedPaymentMethodId: "9916178934434753" });
		expect(request).not.toHaveProperty("additionalData");
	});

	test("When the buyer pays, then the card is stored for the subscription, a hold asks for a manual capture, and ALWAYS asks the issuer to authenticate", () => {
		// Act
		const request = paymentRequest(apis, op, { initiator: "customer", hold: true, authenticateAlways: true }, null, RETURN);

		// Assert
		expect(request).toMatchObject({
			shopperInteraction: "Ecommerce",
			storePaymentMethod: true,
			additionalData: { manualCapture: "true" },
			authenticationData: { attemptAuthentication: "always" },
			returnUrl: RETURN,
			reference: op.idempotencyKey,
		});
	});
});
