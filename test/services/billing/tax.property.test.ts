// Property tests of shared/tax.ts and the documents built on it
// (services/invoicing/invoice-lines.ts), against a model in exact rationals
// (BigInt): per line, tax half away from zero; inclusive prices split the tax
// out, exclusive ones add it. Tax never creates or loses a cent: every line's
// net + tax = gross, the totals are the lines' sums, an invoice's Σ gross − credit
// is the transaction's amount, and inclusive and exclusive prices agree.
//
// PROPERTY_RUNS sets the runs per property (default 300), PROPERTY_SEED the seed.
import fc from "fast-check";
import { billedGross } from "../../../services/billing/pricing/billed";
import type { Billed } from "../../../services/billing/records/transaction";
import type { Charge } from "../../../services/invoicing/charges";
import { creditNoteTotals, invoiceTotals } from "../../../services/invoicing/invoice-lines";
import type { InvoiceDoc } from "../../../services/invoicing/records";
import { priceLines, taxLine } from "../../../shared/tax";

const RUNS = Number(process.env.PROPERTY_RUNS ?? 300);
const SEED = process.env.PROPERTY_SEED === undefined ? undefined : Number(process.env.PROPERTY_SEED);
const settings = { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) };

// ---- The model: exact rationals, rounded half away from zero once per line ----

/** n / d rounded half away from zero, d > 0. */
function roundHalfAway(n: bigint, d: bigint): bigint {
	const magnitude = n < 0n ? -n : n;
	const rounded = (2n * magnitude + d) / (2n * d);
	return n < 0n ? -rounded : rounded;
}
const model = {
	exclusiveTax: (net: number, bps: number) => Number(roundHalfAway(BigInt(net) * BigInt(bps), 10_000n)),
	inclusiveNet: (gross: number, bps: number) => Number(roundHalfAway(BigInt(gross) * 10_000n, BigInt(10_000 + bps))),
};

const amount = fc.integer({ min: -10_000_000, max: 10_000_000 });
const positive = fc.integer({ min: 1, max: 10_000_000 });
const rate = fc.oneof(fc.constantFrom(0, 500, 700, 1900, 2000, 2100, 2500), fc.integer({ min: 0, max: 10_000 }));
const rule = fc.record({ rateBps: rate, inclusive: fc.boolean() });

describe("Tax (shared/tax.ts)", () => {
	test("When any amount is taxed at any rate, then net + tax = gross, and the tax is the model's, half away from zero", () => {
		fc.assert(
			fc.property(amount, rule, (a, r) => {
				const line = taxLine(a, r);
				expect(line.net + line.tax).toBe(line.gross);
				if (r.inclusive)
					expect(line).toEqual({ gross: a, net: model.inclusiveNet(a, r.rateBps), tax: a - model.inclusiveNet(a, r.rateBps) });
				else expect(line).toEqual({ net: a, tax: model.exclusiveTax(a, r.rateBps), gross: a + model.exclusiveTax(a, r.rateBps) });
			}),
			settings,
		);
	});

	test("When a credit mirrors a charge, then its tax is the charge's with the other sign", () => {
		fc.assert(
			fc.property(amount, rule, (a, r) => {
				const charge = taxLine(a, r);
				const credit = taxLine(-a, r);
				expect(credit.tax + charge.tax).toBe(0);
				expect(credit.gross + charge.gross).toBe(0);
			}),
			settings,
		);
	});

	test("When a net price has its tax added, then splitting the tax out of that gross gives the same net and tax back", () => {
		fc.assert(
			fc.property(amount, rate, (net, bps) => {
				const exclusive = taxLine(net, { rateBps: bps, inclusive: false });
				const inclusive = taxLine(exclusive.gross, { rateBps: bps, inclusive: true });
				expect(inclusive).toEqual(exclusive);
			}),
			settings,
		);
	});

	test("When lines are priced with a discount, then the totals are the lines' sums, the discount is taken whole (up to what the lines cost) and nothing else changes", () => {
		const lines = fc.array(fc.record({ amount: positive, rule }), { minLength: 1, maxLength: 5 });
		fc.assert(
			fc.property(lines, fc.integer({ min: 0, max: 20_000_000 }), (ls, discount) => {
				const priced = priceLines(ls, discount);
				const sum = (pick: (l: (typeof priced.lines)[number]) => number) => priced.lines.reduce((t, l) => t + pick(l), 0);
				expect([priced.net, priced.tax, priced.gross]).toEqual([sum(l => l.net), sum(l => l.tax), sum(l => l.gross)]);
				expect(priced.net + priced.tax).toBe(priced.gross);
				const total = ls.reduce((t, l) => t + l.amount, 0);
				expect(priced.discount).toBe(Math.min(discount, total));
				// Each line is its share of the price after the discount, taxed by its own rule: the stated amounts add up to
				// what the lines cost less the discount.
				const stated = priced.lines.reduce((t, l, i) => t + (ls[i].rule.inclusive ? l.gross : l.net), 0);
				expect(stated).toBe(total - priced.discount);
				priced.lines.forEach((line, i) => {
					expect(line).toMatchObject(taxLine(ls[i].rule.inclusive ? line.gross : line.net, ls[i].rule));
					expect(line.gross).toBeGreaterThanOrEqual(0);
				});
			}),
			settings,
		);
	});
});

describe("Invoices' and credit notes' lines (invoices/invoice-lines.ts)", () => {
	const billedLine = fc.record({
		kind: fc.constantFrom("plan" as const, "new_plan_charge" as const, "unused_time_credit" as const),
		productId: fc.integer({ min: 1, max: 3 }),
		quantity: fc.integer({ min: 1, max: 50 }),
		unitAmount: positive,
		amount: fc.integer({ min: -5_000_000, max: 10_000_000 }),
		from: fc.constant(new Date(Date.UTC(2027, 3, 1))),
		to: fc.constant(null),
		tax: fc.option(rule, { nil: undefined }),
	});
	const billed = fc.record({ lines: fc.array(billedLine, { minLength: 1, maxLength: 3 }), tax: rule });
	const transaction = (b: Billed, credit: number, discount: number, charged: number) =>
		({
			id: 1,
			amount: charged,
			productId: 1,
			timestamp: new Date(),
			billed: b,
			creditApplied: credit,
			discount: discount ? { couponId: 1, code: "SAVE", amount: discount } : null,
		}) as Charge;

	test("When a charge is invoiced, then its lines' gross less the credit used is the transaction's amount to the cent, and every line and total adds up", () => {
		fc.assert(
			fc.property(billed, fc.integer({ min: 0, max: 3_000_000 }), fc.integer({ min: 0, max: 2_000_000 }), (b, creditAsked, discount) => {
				const gross = billedGross(b, discount);
				fc.pre(gross > 0);
				const credit = Math.min(creditAsked, gross);
				const tx = transaction(b, credit, discount, gross - credit);
				const totals = invoiceTotals(tx, new Map([[1, "Plan"]]));
				expect(totals.gross - credit).toBe(tx.amount);
				expect(totals.net + totals.tax).toBe(totals.gross);
				for (const line of totals.lines) expect(line.net + line.tax).toBe(line.gross);
				expect(totals.lines.reduce((t, l) => t + l.gross, 0)).toBe(totals.gross);
			}),
			settings,
		);
	});

	test("When a charge comes without what it billed, then it is not invoiced: the issue fails rather than make up lines", () => {
		const charge = { ...transaction({ lines: [], tax: { rateBps: 0, inclusive: true } }, 0, 0, 1000), billed: null };

		expect(() => invoiceTotals(charge, new Map())).toThrow(/without what it billed/);
	});

	test("When part of an invoice is refunded, then the credit note's tax is the invoice's share, never more than the invoice's, and net + tax = what was refunded", () => {
		fc.assert(
			fc.property(positive, rate, fc.double({ min: 0, max: 1, noNaN: true }), (gross, bps, share) => {
				const line = taxLine(gross, { rateBps: bps, inclusive: true });
				const lines = [{ kind: "plan", taxRateBps: bps, ...line }];
				const invoice = { number: "INV-2027-000001", lines, tax: line.tax, gross, taxInclusive: true } as unknown as InvoiceDoc;
				const refunded = Math.max(1, Math.floor(gross * share));
				const note = creditNoteTotals(invoice, refunded);
				expect(note.net + note.tax).toBe(refunded);
				expect(note.gross).toBe(refunded);
				expect(note.tax).toBeLessThanOrEqual(line.tax);
				expect(note.tax).toBeGreaterThanOrEqual(0);
			}),
			settings,
		);
	});
});
