// Products: what a checkout sells, how it bills (CHARGE now, PREAUTHORIZE a
// hold captured when the trial ends, SCHEDULE the first charge after the
// trial) and how often it renews.

import type { AuthenticationPolicy, BillingKind, ProductRecord, ProductView, RenewalPeriod } from "../../shared/contracts/accounts";
import { findCurrency, toDecimal, toMinorUnits } from "../../shared/money";
import { ownedBy } from "../../shared/persistence";
import { priceProblem, type UsagePrice } from "../../shared/usage-pricing";
import type { AccountsDeps } from "./deps";
import { AccountsError } from "./errors";
import { productTaxOf } from "./invoice-settings";
import { accountExists } from "./merchant-accounts";
import type { AccountDoc, ProductDoc } from "./models";

export interface ProductInput {
	name: string;
	amount: number;
	currency: string;
	billing: BillingKind;
	trialDays?: number;
	renewal: RenewalPeriod | null;
	allowMultipleSubscriptions: boolean;
	authentication: AuthenticationPolicy;
	merchantAccountGroup: string;
	active: boolean;
	taxRateBps?: number | null;
	usagePrices?: UsagePrice[];
}

const TRIAL_DAYS: Record<BillingKind, [min: number, max: number]> = {
	CHARGE: [0, 0],
	SCHEDULE: [1, 365],
	PREAUTHORIZE: [1, 7],
};

/** The product as other services get it; `account` (its invoice settings) resolves its tax. */
export function toProductRecord(doc: ProductDoc, account: Pick<AccountDoc, "invoicing"> | null = null): ProductRecord {
	const currency = findCurrency(doc.currency)!;
	return {
		id: doc._id,
		accountId: doc.accountId,
		name: doc.name,
		amount: toDecimal(doc.amount, currency),
		amountMinor: doc.amount,
		currency: currency.code,
		currencyId: currency.id,
		billing: doc.billing,
		trialDays: doc.trialDays,
		renewal: doc.renewal ? { every: doc.renewal.every, unit: doc.renewal.unit } : null,
		allowMultipleSubscriptions: doc.allowMultipleSubscriptions,
		authentication: doc.authentication,
		merchantAccountGroup: doc.merchantAccountGroup,
		active: doc.active,
		taxRateBps: doc.taxRateBps ?? null,
		usagePrices: doc.usagePrices ?? [],
		tax: productTaxOf(account, doc),
	};
}

export function toProductView(doc: ProductDoc): ProductView {
	const { amountMinor: _, tax: __, ...view } = toProductRecord(doc);
	return view;
}

/** Checks the whole product (after a patch too) and converts the amount to minor units. */
function checkProduct(input: ProductInput): Omit<ProductDoc, "_id" | "accountId" | "createdAt"> | AccountsError {
	const currency = findCurrency(input.currency);
	if (!currency) return AccountsError.UnknownCurrency;
	const amount = toMinorUnits(input.amount, currency);
	if (typeof amount !== "number") return AccountsError.InvalidAmount;
	// Only CHARGE may leave trialDays out: a trial's length is never guessed.
	const trialDays = input.trialDays ?? (input.billing === "CHARGE" ? 0 : undefined);
	const [min, max] = TRIAL_DAYS[input.billing];
	if (trialDays === undefined || trialDays < min || trialDays > max) return AccountsError.InvalidTrial;
	const usage = usagePricesProblem(input);
	if (usage) return usage;
	return { ...input, amount, currency: currency.code, trialDays };
}

/**
 * Whether the usage prices cannot be billed: each meter priced once, each price whole (shared/usage-pricing.ts), and
 * billed in arrears at a renewal, so the product renews and is not a hold captured at a fixed amount.
 */
function usagePricesProblem(input: ProductInput): AccountsError | null {
	const prices = input.usagePrices ?? [];
	if (prices.length === 0) return null;
	if (new Set(prices.map(price => price.meter)).size !== prices.length) return AccountsError.InvalidUsagePrice;
	if (prices.some(price => priceProblem(price) !== null)) return AccountsError.InvalidUsagePrice;
	if (!input.renewal || input.billing === "PREAUTHORIZE") return AccountsError.UsagePricesConflictWithBilling;
	return null;
}

/** Whether every meter the prices name is one of the account's (the usage service keeps them). */
async function metersExist(deps: AccountsDeps, accountId: number, prices: UsagePrice[] | undefined): Promise<boolean> {
	if (!prices?.length) return true;
	const meters = await deps.call("usage.meters", { accountId, codes: prices.map(price => price.meter) });
	return meters.length === new Set(prices.map(price => price.meter)).size;
}

/**
 * A patch's error is the patch's own (400) when it holds every field the rule
 * is about; otherwise the patch is fine alone and conflicts with the stored product (409).
 */
function blame(error: AccountsError, changes: Partial<ProductInput>): AccountsError {
	if (error === AccountsError.InvalidAmount && (changes.amount === undefined || changes.currency === undefined))
		return AccountsError.AmountConflictsWithCurrency;
	if (error === AccountsError.InvalidTrial && changes.billing === undefined) return AccountsError.TrialConflictsWithBilling;
	const usageRule = changes.usagePrices !== undefined && changes.renewal !== undefined && changes.billing !== undefined;
	if (error === AccountsError.UsagePricesConflictWithBilling && usageRule) return AccountsError.InvalidUsagePrice;
	return error;
}

export async function createProduct(deps: AccountsDeps, input: ProductInput & { accountId: number }): Promise<ProductView | AccountsError> {
	const { accountId, ...fields } = input;
	if (!(await accountExists(deps, accountId))) return AccountsError.UnknownAccount;
	const product = checkProduct(fields);
	// A new product's body holds every field the usage rule is about: its conflict is the request's own (400).
	if (typeof product === "string")
		return product === AccountsError.UsagePricesConflictWithBilling ? AccountsError.InvalidUsagePrice : product;
	if (!(await metersExist(deps, accountId, product.usagePrices))) return AccountsError.InvalidUsagePrice;
	const doc = await deps.db.products.create({ _id: await deps.db.ids.products.next(), accountId, ...product, createdAt: deps.now() });
	return toProductView(doc.toObject());
}

export async function updateProduct(
	deps: AccountsDeps,
	input: Partial<ProductInput> & { accountId: number; productId: number },
): Promise<ProductView | AccountsError> {
	const { accountId, productId, ...changes } = input;
	if (Object.keys(changes).length === 0) return AccountsError.NothingToChange;
	const current = ownedBy(await deps.db.products.findById(productId).lean(), accountId);
	if (!current) return AccountsError.UnknownProduct;
	const currentInput: ProductInput = {
		name: current.name,
		amount: toDecimal(current.amount, findCurrency(current.currency)!),
		currency: current.currency,
		billing: current.billing,
		trialDays: current.trialDays,
		renewal: current.renewal,
		allowMultipleSubscriptions: current.allowMultipleSubscriptions,
		authentication: current.authentication,
		merchantAccountGroup: current.merchantAccountGroup,
		active: current.active,
		taxRateBps: current.taxRateBps ?? null,
		usagePrices: current.usagePrices ?? [],
	};
	// billing comes with its trialDays (unless CHARGE, which has none), as in a new product.
	if (changes.billing && changes.trialDays === undefined) delete currentInput.trialDays;
	const product = checkProduct({ ...currentInput, ...changes });
	if (typeof product === "string") return blame(product, changes);
	if (changes.usagePrices && !(await metersExist(deps, accountId, product.usagePrices))) return AccountsError.InvalidUsagePrice;
	const doc = await deps.db.products.findOneAndUpdate({ _id: productId, accountId }, { $set: product }, { returnDocument: "after" }).lean();
	return doc ? toProductView(doc) : AccountsError.UnknownProduct;
}

export async function getProduct(deps: AccountsDeps, input: { accountId: number; productId: number }): Promise<ProductRecord | null> {
	const [doc, account] = await Promise.all([
		deps.db.products.findById(input.productId).lean(),
		deps.db.accounts.findById(input.accountId, { invoicing: 1 }).lean(),
	]);
	return doc?.accountId === input.accountId ? toProductRecord(doc, account) : null;
}

export async function listProducts(deps: AccountsDeps, input: { accountId: number }): Promise<ProductView[] | AccountsError> {
	if (!(await accountExists(deps, input.accountId))) return AccountsError.UnknownAccount;
	return (await deps.db.products.find({ accountId: input.accountId }).sort({ _id: 1 }).lean()).map(toProductView);
}
