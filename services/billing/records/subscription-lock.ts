// The subscription_locks collection: the duplicate-subscription check's one
// lock per (account, product, email, card fingerprint), taken and released in
// subscription-lock.ts at billing's top level.
import { Schema } from "mongoose";

/** A live subscription's hold on its (account, product, email, card); see subscription-lock.ts. */
export interface SubscriptionLockDoc {
	/** Hash of (account, product, email, card fingerprint). */
	_id: string;
	customerId: number;
	createdAt: Date;
}

const options = { versionKey: false } as const;

export const subscriptionLockSchema = new Schema<SubscriptionLockDoc>(
	{ _id: String, customerId: { type: Number, required: true }, createdAt: { type: Date, required: true } },
	options,
);
