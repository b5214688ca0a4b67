// Coupons (docs/coupons.md): an operator creates, lists and deactivates them;
// a checkout or billing resolves one (couponFor) and takes a redemption
// (redeemCoupon) before the payment, which billing then keeps (confirmCoupon)
// or gives back (releaseCoupon). Each of those three is ONE conditional update
// on the coupon by `_id`, so the limit holds exactly across checkout nodes:
//   redeem:  {_id, active, redeemed < max, pending ∌ customer} → $inc redeemed, $push pending
//   confirm: {_id, pending ∋ customer} → $pull pending
//   release: {_id, pending ∋ customer} → $inc redeemed −1, $pull pending
// Keyed by the customer, each is idempotent: a repeat, or the checkout
// recovery settling a crashed checkout, changes nothing more.
import { type CouponDuration, CouponError, type CouponRef, type CouponTerms, type CouponView } from "../../shared/contracts/accounts";
import { findCurrency, toDecimal, toMinorUnits } from "../../shared/money";
import { isDuplicateKey, ownedBy } from "../../shared/persistence";
import { formatDateTime, formatOptionalDateTime } from "../../shared/time";
import type { AccountsDeps } from "./deps";
import { AccountsError } from "./errors";
import { accountExists } from "./merchant-accounts";
import type { CouponDoc } from "./models";

/** Operators' lists stop here: newest first. */
export const COUPONS_LIST_LIMIT = 1000;

export interface CouponInput {
	accountId: number;
	code: string;
	percentOff?: number;
	amountOff?: number;
	currency?: string;
	duration: CouponDuration;
	durationInPeriods?: number;
	productIds?: number[];
	maxRedemptions?: number;
	redeemBy?: string;
}

/** Promotion codes are matched without regard to letter case: stored and looked up upper case. */
export const normalCode = (code: string) => code.trim().toUpperCase();

export function toCouponView(doc: CouponDoc): CouponView {
	const currency = doc.currency ? findCurrency(doc.currency) : undefined;
	return {
		id: doc._id,
		accountId: doc.accountId,
		code: doc.code,
		percentOff: doc.percentOff,
		amountOff: doc.amountOff !== null && currency ? toDecimal(doc.amountOff, currency) : null,
		currency: doc.currency,
		duration: doc.duration,
		durationInPeriods: doc.durationInPeriods,
		productIds: doc.productIds,
		maxRedemptions: doc.maxRedemptions,
		redeemed: doc.redeemed,
		redeemBy: formatOptionalDateTime(doc.redeemBy),
		active: doc.active,
		createdAt: formatDateTime(doc.createdAt),
	};
}

export const termsOf = (doc: CouponDoc): CouponTerms => ({
	couponId: doc._id,
	code: doc.code,
	percentOff: doc.percentOff,
	amountOff: doc.amountOff,
	currency: doc.currency,
	duration: doc.duration,
	periods: doc.duration === "repeating" ? doc.durationInPeriods : null,
	productIds: doc.productIds,
});

/** The discount: exactly one of a percentage and an amount with its currency; a number of periods for `repeating` only. */
function checkTerms(input: CouponInput): Pick<CouponDoc, "percentOff" | "amountOff" | "currency" | "durationInPeriods"> | AccountsError {
	const periods = input.duration === "repeating" ? (input.durationInPeriods ?? null) : null;
	if ((input.duration === "repeating") !== (input.durationInPeriods !== undefined)) return AccountsError.InvalidCouponDuration;
	if (input.percentOff !== undefined) {
		if (input.amountOff !== undefined || input.currency !== undefined) return AccountsError.InvalidCouponDiscount;
		return { percentOff: input.percentOff, amountOff: null, currency: null, durationInPeriods: periods };
	}
	const currency = input.currency ? findCurrency(input.currency) : undefined;
	if (input.amountOff === undefined || !currency) return AccountsError.InvalidCouponDiscount;
	const amountOff = toMinorUnits(input.amountOff, currency);
	if (typeof amountOff !== "number") return AccountsError.InvalidAmount;
	return { percentOff: null, amountOff, currency: currency.code, durationInPeriods: periods };
}

export async function createCoupon(deps: AccountsDeps, input: CouponInput): Promise<CouponView | AccountsError> {
	if (!(await accountExists(deps, input.accountId))) return AccountsError.UnknownAccount;
	const terms = checkTerms(input);
	if (typeof terms === "string") return terms;
	const redeemBy = input.redeemBy ? new Date(input.redeemBy) : null;
	if (redeemBy && redeemBy.getTime() <= deps.now().getTime()) return AccountsError.RedeemByPast;
	const productIds = input.productIds?.length ? [...new Set(input.productIds)].sort((a, b) => a - b) : null;
	if (productIds && !(await allProductsOf(deps, input.accountId, productIds))) return AccountsError.UnknownProduct;
	const doc: CouponDoc = {
		_id: await deps.db.ids.coupons.next(),
		accountId: input.accountId,
		code: normalCode(input.code),
		...terms,
		duration: input.duration,
		productIds,
		maxRedemptions: input.maxRedemptions ?? null,
		redeemed: 0,
		pending: [],
		redeemBy,
		active: true,
		createdAt: deps.now(),
	};
	try {
		await deps.db.coupons.create(doc);
	} catch (err) {
		if (isDuplicateKey(err)) return AccountsError.DuplicateCouponCode;
		throw err;
	}
	return toCouponView(doc);
}

/** Whether every one of the ids is a product of the account (read by `_id`). */
async function allProductsOf(deps: AccountsDeps, accountId: number, productIds: number[]): Promise<boolean> {
	const found = await deps.db.products.find({ _id: { $in: productIds } }, { accountId: 1 }).lean();
	return found.length === productIds.length && found.every(product => product.accountId === accountId);
}

/** The operators' list, newest first (a search by account: off the checkout's path). */
export async function listCoupons(deps: AccountsDeps, input: { accountId: number }): Promise<CouponView[] | AccountsError> {
	if (!(await accountExists(deps, input.accountId))) return AccountsError.UnknownAccount;
	const docs = await deps.db.coupons.find({ accountId: input.accountId }).sort({ _id: -1 }).limit(COUPONS_LIST_LIMIT).lean();
	return docs.map(toCouponView);
}

/** No new redemption once deactivated; customers that have it keep it for its duration (docs/coupons.md). Idempotent. */
export async function deactivateCoupon(
	deps: AccountsDeps,
	input: { accountId: number; couponId: number },
): Promise<CouponView | AccountsError> {
	const current = ownedBy(await deps.db.coupons.findById(input.couponId).lean(), input.accountId);
	if (!current) return AccountsError.UnknownCoupon;
	const doc = await deps.db.coupons.findOneAndUpdate({ _id: current._id }, { $set: { active: false } }, { returnDocument: "after" }).lean();
	return toCouponView(doc ?? current);
}

/** The account's coupon by id, or by code through the unique `(accountId, code)` index: both exact-match reads. */
async function findCoupon(deps: AccountsDeps, ref: CouponRef): Promise<CouponDoc | null> {
	if (ref.couponId !== undefined) return ownedBy(await deps.db.coupons.findById(ref.couponId).lean(), ref.accountId);
	if (ref.code === undefined) return null;
	return deps.db.coupons.findOne({ accountId: ref.accountId, code: normalCode(ref.code) }).lean();
}

/** Why the coupon cannot be redeemed now (leaving the limit to the conditional update), or null. */
function refusal(doc: CouponDoc, now: Date): CouponError | null {
	if (!doc.active) return CouponError.Inactive;
	if (doc.redeemBy && doc.redeemBy.getTime() <= now.getTime()) return CouponError.Expired;
	if (doc.maxRedemptions !== null && doc.redeemed >= doc.maxRedemptions) return CouponError.UsedUp;
	return null;
}

/** Read only: the coupon's terms if a new subscription to the product may use it now. */
export async function couponFor(deps: AccountsDeps, input: CouponRef & { productId: number }): Promise<CouponTerms | CouponError> {
	const doc = await findCoupon(deps, input);
	if (!doc) return CouponError.NotFound;
	const refused = refusal(doc, deps.now());
	if (refused) return refused;
	if (doc.productIds && !doc.productIds.includes(input.productId)) return CouponError.WrongProduct;
	if (doc.currency) {
		const product = ownedBy(await deps.db.products.findById(input.productId).lean(), input.accountId);
		if (product && product.currency !== doc.currency) return CouponError.WrongCurrency;
	}
	return termsOf(doc);
}

/** Takes one redemption for the customer, in one conditional update; a repeat for the same customer answers the same. */
export async function redeemCoupon(
	deps: AccountsDeps,
	input: { accountId: number; couponId: number; customerId: number },
): Promise<{ redeemed: true } | CouponError> {
	const doc = ownedBy(await deps.db.coupons.findById(input.couponId).lean(), input.accountId);
	if (!doc) return CouponError.NotFound;
	if (doc.pending.includes(input.customerId)) return { redeemed: true };
	const refused = refusal(doc, deps.now());
	if (refused) return refused;
	const limit = doc.maxRedemptions === null ? {} : { redeemed: { $lt: doc.maxRedemptions } };
	const taken = await deps.db.coupons.updateOne(
		{ _id: doc._id, active: true, pending: { $ne: input.customerId }, ...limit },
		{ $inc: { redeemed: 1 }, $push: { pending: input.customerId } },
	);
	if (taken.modifiedCount === 1) return { redeemed: true };
	// Lost a race: to the limit, a deactivation, or this customer's own repeat.
	const now = ownedBy(await deps.db.coupons.findById(input.couponId).lean(), input.accountId);
	if (now?.pending.includes(input.customerId)) return { redeemed: true };
	return (now && refusal(now, deps.now())) ?? CouponError.UsedUp;
}

/** The customer's payment was made: its redemption is kept for good. */
export async function confirmCoupon(deps: AccountsDeps, input: { couponId: number; customerId: number }): Promise<{ confirmed: boolean }> {
	const kept = await deps.db.coupons.updateOne(
		{ _id: input.couponId, pending: input.customerId },
		{ $pull: { pending: input.customerId } },
	);
	return { confirmed: kept.modifiedCount === 1 };
}

/** The customer's payment ended unpaid (declined, abandoned, its checkout crashed): its redemption is given back. */
export async function releaseCoupon(deps: AccountsDeps, input: { couponId: number; customerId: number }): Promise<{ released: boolean }> {
	const given = await deps.db.coupons.updateOne(
		{ _id: input.couponId, pending: input.customerId },
		{ $inc: { redeemed: -1 }, $pull: { pending: input.customerId } },
	);
	return { released: given.modifiedCount === 1 };
}
