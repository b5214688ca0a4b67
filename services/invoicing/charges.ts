// A transaction as invoicing issues from it: billing's request
// (shared/contracts/invoicing.ts ChargedTransaction) with its dates read back
// as Dates.
import type { ChargedLine, ChargedTransaction } from "../../shared/contracts/invoicing";

export interface BilledLine extends Omit<ChargedLine, "from" | "to"> {
	from: Date | null;
	to: Date | null;
}

export interface Billed {
	lines: BilledLine[];
	tax: { rateBps: number; inclusive: boolean };
}

export interface Charge extends Omit<ChargedTransaction, "timestamp" | "billed"> {
	timestamp: Date;
	billed: Billed | null;
}

const dateOf = (text: string | null) => (text === null ? null : new Date(text));

export function chargeOf(tx: ChargedTransaction): Charge {
	const billed = tx.billed && {
		tax: tx.billed.tax,
		lines: tx.billed.lines.map(line => ({ ...line, from: dateOf(line.from), to: dateOf(line.to) })),
	};
	return { ...tx, timestamp: new Date(tx.timestamp), billed };
}
