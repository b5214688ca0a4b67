// The change_quotes collection: a binding quote for a subscription's change in
// place (changes/), keyed by a random id, read only by that key. It holds
// what the change was computed on (`basis`) and what it came to, so applying it
// charges exactly the quoted amount, whatever the clock says, until it expires.
import { Schema } from "mongoose";
import type { ChangeMode, SubscriptionPeriod } from "../changes/rules/subscription-period";
import type { Actor } from "./outbox-event";

export interface QuotedLine {
	kind: "unused_time_credit" | "new_plan_charge";
	productId: number;
	quantity: number;
	unitAmount: number;
	from: Date;
	to: Date;
	/** Minor units: a charge positive, a credit negative. */
	amount: number;
	/** The tax its product's price carries (shared/tax.ts): the old product's on the credit line, the new one's on the charge. */
	tax: { rateBps: number; inclusive: boolean };
}

/** What a quote came to (minor units of `currency`). */
export interface QuotedChange {
	mode: ChangeMode;
	/** During a trial nothing was paid: the plan the first charge bills switches, nothing is prorated. */
	trial: boolean;
	intervalChange: boolean;
	currency: string;
	from: { productId: number; quantity: number };
	to: { productId: number; quantity: number };
	lines: QuotedLine[];
	/** Due now, before the credit: the card is charged `charged`, the credit pays `creditUsed`. */
	due: number;
	creditUsed: number;
	charged: number;
	/** Added to the customer's credit (a downgrade). */
	creditAdded: number;
	creditAfter: number;
	nextRenewal: { at: Date | null; productId: number; quantity: number; amount: number };
	/** The customer's period after the change (null during a trial). */
	state: SubscriptionPeriod | null;
}

/** The customer's fields the quote was computed on: applying it requires them unchanged. */
export interface QuoteBasis {
	productId: number;
	quantity: number;
	credit: number;
	nextRenewalTimestamp: Date | null;
	periodsBilled: number;
}

export interface ChangeQuoteDoc {
	/** `q_` and 32 hex digits: random, or a digest of the change's Idempotency-Key (changes/change-quote.ts: keyedQuoteId). */
	_id: string;
	accountId: number;
	customerId: number;
	/** Real times: a quote binds for QUOTE_TTL_MS, whatever a test clock says (account-time.ts). */
	createdAt: Date;
	expiresAt: Date;
	basis: QuoteBasis;
	result: QuotedChange;
	usedAt: Date | null;
	/** What the change answered, written before the change is applied: a repeat of its Idempotency-Key gets it again. */
	answer?: object | null;
	/** Quoted in the customer portal: the change's event says the buyer made it. Absent: the merchant. */
	by?: Actor;
}

const options = { versionKey: false } as const;

export const changeQuoteSchema = new Schema<ChangeQuoteDoc>(
	{
		_id: String,
		accountId: { type: Number, required: true },
		customerId: { type: Number, required: true },
		createdAt: { type: Date, required: true },
		expiresAt: { type: Date, required: true },
		basis: { type: Schema.Types.Mixed, required: true },
		result: { type: Schema.Types.Mixed, required: true },
		usedAt: { type: Date, default: null },
		answer: { type: Schema.Types.Mixed, default: null },
		by: { type: String, required: false },
	},
	options,
);
// Production (MongoDB) removes expired quotes a day after they expire; mongo-java-server ignores it (they stay, inert).
changeQuoteSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 86_400 });
