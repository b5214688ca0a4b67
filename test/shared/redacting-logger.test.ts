import { ServiceBroker } from "moleculer";
import { RedactingConsoleLogger, redactCardNumbers } from "../../shared/redacting-logger";

describe("Log redaction", () => {
	test.each([
		["4242424242424242", "424242******4242"],
		["card 4242 4242 4242 4242 declined", "card 424242******4242 declined"],
		["378282246310005", "378282*****0005"],
		["{\"pan\":\"5555-5555-5555-4444\"}", "{\"pan\":\"555555******4444\"}"],
	])("When %s is logged, then it prints as %s", (input, output) => {
		expect(redactCardNumbers(input)).toBe(output);
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
