// Console logging that never prints a card number: any run of 13-19 digits
// (spaces or dashes allowed between them) is masked to its first 6 and last
// 4 digits, whatever logged it (our code, Moleculer, a library's error).
import { Loggers } from "moleculer";

const CARD_NUMBER = /\b\d(?:[ -]?\d){12,18}\b/g;

export function redactCardNumbers(text: string): string {
	return text.replace(CARD_NUMBER, match => {
		const digits = match.replace(/[ -]/g, "");
		return `${digits.slice(0, 6)}${"*".repeat(digits.length - 10)}${digits.slice(-4)}`;
	});
}

export class RedactingConsoleLogger extends Loggers.Console {
	override getFormatter(bindings: Parameters<Loggers.Console["getFormatter"]>[0]) {
		const format = super.getFormatter(bindings);
		// Objects are already printed to strings by the formatter, so every part is redacted.
		return (type: Parameters<typeof format>[0], args: unknown[]) =>
			format(type, args).map(part => redactCardNumbers(String(part)));
	}
}
