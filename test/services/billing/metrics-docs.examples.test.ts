// The answer examples of GET /api/metrics in docs/api.md and docs/openapi.json are what the pure functions of
// services/billing/entries/ make of docs/metrics.md's worked example, so they cannot drift from the definitions: the
// story (test/factories/metrics-march.ts) is counted as billing counts it (customerEntry, transactionEntry), summed
// into month documents as the relay's $inc does, and read as GET /api/metrics reads them (seriesOf, the answer's
// fields as metrics-read.ts writes them). A failure prints the answer the docs should show.
import { readFileSync } from "node:fs";
import path from "node:path";
import { customerEntry, transactionEntry } from "../../../services/billing/entries/metrics-entries";
import { type Contribution, contributionOf } from "../../../services/billing/entries/subscription-state";
import type { MetricsEntry } from "../../../services/billing/records/metrics";
import { TransactionStatus, TransactionType } from "../../../services/billing/states";
import { seriesOf } from "../../../services/metrics/metrics-series";
import type { MetricsMonthDoc } from "../../../services/metrics/models";
import { config } from "../../../shared/config";
import { MARCH_FIRST_CHARGES, MARCH_OPENING, MARCH_STORY } from "../../factories/metrics-march";
import { local } from "../../factories/subscription-period";

const DOCS = path.resolve(__dirname, "../../../docs");
const ACCOUNT = 12;
const MID = 21;

/** The entries of the opening (A and B new on 1 February), March's story and its first week's charges. */
function entries(): MetricsEntry[] {
	const counted = new Map<string, Contribution>();
	const changes: [string, string, Contribution][] = [
		...Object.entries(MARCH_OPENING).map(([name, state]): [string, string, Contribution] => [
			"2026-02-01T10:00",
			name,
			contributionOf(state),
		]),
		...MARCH_STORY.map(([at, name, state]): [string, string, Contribution] => [at, name, contributionOf(state)]),
	];
	const found: (MetricsEntry | null)[] = changes.map(([at, name, after]) => {
		const entry = customerEntry(ACCOUNT, counted.get(name) ?? null, after, local(at));
		counted.set(name, after);
		return entry;
	});
	for (const [at, amount, product] of MARCH_FIRST_CHARGES) {
		const charge = { type: TransactionType.SubscriptionStart, status: TransactionStatus.Approved, amount };
		found.push(transactionEntry({ ...charge, accountId: ACCOUNT, currency: "EUR", productId: product.id, midId: MID }, local(at)));
	}
	return found.filter(entry => entry !== null);
}

/** The month documents those entries make: each count added at `days.<DD>.<scope>.<count>`. */
function months(): Pick<MetricsMonthDoc, "month" | "days">[] {
	const docs = new Map<string, Pick<MetricsMonthDoc, "month" | "days">>();
	for (const entry of entries()) {
		const month = entry.day.slice(0, 7);
		const doc = docs.get(month) ?? { month, days: {} };
		docs.set(month, doc);
		const day = (doc.days[entry.day.slice(8)] ??= {});
		for (const [scope, counts] of Object.entries(entry.counts)) {
			const figures: Record<string, number> = (day[scope] ??= {});
			for (const [count, n] of Object.entries(counts ?? {})) figures[count] = (figures[count] ?? 0) + (n as number);
		}
	}
	return [...docs.values()];
}

/** GET /api/metrics's answer for the account's total in EUR. */
function answer(from: string, to: string, granularity: "day" | "week" | "month") {
	const { hasFigures: _, ...figures } = seriesOf({ months: months(), scope: "all", from, to, granularity });
	return { from, to, granularity, productId: null, midId: null, timeZone: config().timeZone, series: [{ currency: "EUR", ...figures }] };
}

/** `"...": "..."` marks what an abbreviated example leaves out: dropped, so the rest is compared. */
function withoutEllipses(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(withoutEllipses);
	if (value === null || typeof value !== "object") return value;
	return Object.fromEntries(
		Object.entries(value)
			.filter(([key]) => key !== "...")
			.map(([key, v]) => [key, withoutEllipses(v)]),
	);
}

describe("The metrics examples in the docs", () => {
	test("When docs/openapi.json shows two weeks of March, then each of its examples is the answer the pure functions make of the worked example", () => {
		// Arrange
		const document = JSON.parse(readFileSync(path.join(DOCS, "openapi.json"), "utf8"));
		const examples = ["/api/metrics", "/admin/accounts/{accountId}/metrics"].map(
			route => document.paths[route].get.responses["200"].content["application/json"].examples.weeks.value,
		);

		// Act
		const expected = answer("2026-03-01", "2026-03-08", "week");

		// Assert
		for (const example of examples) expect(example).toEqual(expected);
	});

	test("When docs/api.md shows the same weeks, abbreviated, then every figure it shows is the pure functions' and follows the ARPU's definition", () => {
		// Arrange: the JSON block that follows the section's curl
		const text = readFileSync(path.join(DOCS, "api.md"), "utf8");
		const section = text.slice(text.indexOf("### GET /api/metrics"));
		const block = section.slice(section.indexOf("```json") + "```json".length, section.indexOf("```", section.indexOf("```json") + 7));
		const example = withoutEllipses(JSON.parse(block)) as ReturnType<typeof answer>;

		// Act
		const expected = answer(example.from, example.to, example.granularity);

		// Assert
		expect(expected).toMatchObject(example);
		// Σ closing MRR ÷ Σ closing subscribers: 2–8 March, (3 × 4433 + 4 × 5233) ÷ (3 × 3 + 4 × 4) = 34,231 ÷ 25;
		// 1–8 March adds 1 March's 1833 and 2: 36,064 ÷ 27.
		const [, week] = expected.series[0].points;
		expect([week.arpu, expected.series[0].total.arpu]).toEqual([Math.round(34_231 / 25), Math.round(36_064 / 27)]);
	});
});
