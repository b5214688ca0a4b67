// A customer's credit (minor units, never negative) pays a charge before the
// card does: what is left of the charge goes to the card, what is left of the
// credit stays for the next one.
import { type ChangeResult, failed, ok } from "./change-errors";

export interface CreditApplied {
	/** What the card is charged: amountDue less the credit used, never negative. */
	charged: number;
	/** The credit that remains, never negative. */
	creditLeft: number;
}

const isAmount = (value: number) => Number.isSafeInteger(value) && value >= 0;

/** Uses `credit` toward `amountDue` (both non-negative integers of minor units): charged + credit used = amountDue. */
export function applyCredit(credit: number, amountDue: number): ChangeResult<CreditApplied> {
	if (!isAmount(credit)) return failed({ code: "INVALID_AMOUNT", field: "credit", value: credit });
	if (!isAmount(amountDue)) return failed({ code: "INVALID_AMOUNT", field: "amountDue", value: amountDue });
	const used = Math.min(credit, amountDue);
	return ok({ charged: amountDue - used, creditLeft: credit - used });
}
