import { ServiceBroker } from "moleculer";
import { RedactingConsoleLogger, redactCardNumbers, redactSecrets } from "../../shared/redacting-logger";

describe("Log redaction", () => {
	test.each([
		["4242424242424242", "424242******4242"],
		["card 4242 4242 4242 4242 declined", "card 424242******4242 declined"],
		["378282246310005", "378282*****0005"],
		['{"pan":"5555-5555-5555-4444"}', '{"pan":"555555******4444"}'],
	])("When %s is logged, then it prints as %s", (input, output) => {
		expect(redactCardNumbers(input)).toBe(output);
	});

	test.each([
		[
			"=> POST /api/session?domain=a.com&access_token=sk_test_BXHj7nZuAOnmhz1pWtwEduAAxwkSlr_F_WeuKff2iWs",
			"=> POST /api/session?domain=a.com&access_token=[redacted]",
		],
		["token sk_live_BXHj7nZuAOnmhz1pWtwEduAAxwkSlr_F_WeuKff2iWs rejected", "token sk_live_[redacted] rejected"],
		["secret whsec_Qm9vZ2xlZ29vZ2xlZ29vZ2xl", "secret whsec_[redacted]"],
		["Authorization: Bearer abc.def.ghi", "Authorization: Bearer [redacted]"],
		["GET /x?api_key=123&sessionId=abc", "GET /x?api_key=[redacted]&sessionId=abc"],
		["-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----", "[redacted private key]"],
		[
			"<= 200 GET /api/buyer/invoices/17/2aB9gxbm06Oso28NYReTDKw6uHm8wUJdcDfWLh0Lq1A/pdf",
			"<= 200 GET /api/buyer/invoices/17/[redacted]/pdf",
		],
		["GET /api/buyer/credit-notes/3/Zm9v_YmFy-YmF6", "GET /api/buyer/credit-notes/3/[redacted]"],
	])("When %s is logged, then the secret is masked", (input, output) => {
		expect(redactSecrets(input, [])).toBe(output);
	});

	test("When a configured secret appears in a line, then it is masked wherever it is", () => {
		expect(redactSecrets("admin token was change-me-0123456789 here", ["change-me-0123456789"])).toBe("admin token was [redacted] here");
	});

	test("When a number is too short to be a card (an id, an amount), then it is left alone", () => {
		expect(redactCardNumbers("customer 123456789012 paid 1999")).toBe("customer 123456789012 paid 1999");
	});

	test("When a broker logs an object holding a card number, then the console shows it masked", () => {
		// Arrange
		const lines: string[] = [];
		const spy = jest.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(args.join(" ")));
		const broker = new ServiceBroker({ logger: new RedactingConsoleLogger({ level: "info", colors: false }) });

		// Act
		broker.logger.info("checkout failed", { card: { number: "4000000000000002" } });

		// Assert
		spy.mockRestore();
		const line = lines.find(l => l.includes("checkout failed"))!;
		expect(line).toContain("400000******0002");
		expect(line).not.toContain("4000000000000002");
	});
});
