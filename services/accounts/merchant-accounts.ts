// Merchant accounts (MIDs) and their groups: the operator's creates, updates and lists (a Stripe or Adyen MID's keys
// arrive sealed to the payments service), a group's MIDs, and a MID's processor for the payments service.
import { isFailure } from "../../shared/call";
import type { CardType, Environment, MerchantAccountProcessor, MerchantAccountView, MidProcessor } from "../../shared/contracts/accounts";
import { findCurrency, toDecimal, toMinorUnits } from "../../shared/money";
import type { AccountsDeps } from "./deps";
import { AccountsError } from "./errors";
import { groupKey, type MerchantAccountDoc } from "./models";

/**
 * A MID's processor as the gateway service hands it over: the sandbox, or Stripe or Adyen with its key (and its webhook
 * signing secret, if given) already sealed to the payments service, the mode and last 4 characters beside them, read
 * before they were sealed.
 */
export type ProcessorInput = { type: "sandbox" } | (SealedKeys & ({ type: "stripe" } | AdyenInput));

/** A processor's key (and webhook secret) sealed by the gateway, with what the rules and answers need of them. */
interface SealedKeys {
	sealedSecretKey: string;
	keyMode: "test" | "live";
	secretKeyLast4: string;
	sealedWebhookSecret?: string;
	webhookSecretLast4?: string;
}

/** Adyen's merchant account the MID charges on, and its live URL prefix (absent: Adyen's test platform). */
interface AdyenInput {
	type: "adyen";
	merchantAccount: string;
	liveUrlPrefix?: string;
}

export function toMerchantAccountView(doc: MerchantAccountDoc): MerchantAccountView {
	return {
		id: doc._id,
		accountId: doc.accountId,
		name: doc.name,
		group: doc.group,
		cardTypes: doc.cardTypes,
		active: doc.active,
		processor: doc.processor,
		weight: doc.weight,
		monthlyCap: doc.monthlyCap
			? { amount: toDecimal(doc.monthlyCap.amount, findCurrency(doc.monthlyCap.currency)!), currency: doc.monthlyCap.currency }
			: null,
	};
}

/** A monthly cap as the admin API takes it (a decimal) in minor units; null for none. */
function capOf(input: { amount: number; currency: string } | null): MerchantAccountDoc["monthlyCap"] | AccountsError {
	if (input === null) return null;
	const currency = findCurrency(input.currency);
	if (!currency) return AccountsError.UnknownCurrency;
	const amount = toMinorUnits(input.amount, currency);
	return typeof amount === "number" ? { amount, currency: currency.code } : AccountsError.InvalidAmount;
}

export async function accountExists(deps: AccountsDeps, accountId: number): Promise<boolean> {
	return (await deps.db.accounts.countDocuments({ _id: accountId })) > 0;
}

/**
 * Which processors an environment may use: a production account real ones with live keys, a sandbox account the
 * sandbox or a processor's test keys. Without one named, a sandbox MID uses the sandbox and a production MID has none.
 */
function allowedProcessor(environment: Environment, input: ProcessorInput | null | undefined): ProcessorInput | null | AccountsError {
	if (input === undefined) return environment === "sandbox" ? { type: "sandbox" } : null;
	if (input === null) return null;
	if (input.type === "sandbox") return environment === "sandbox" ? input : AccountsError.SandboxInProduction;
	if (environment === "production" && input.keyMode !== "live") return AccountsError.TestKeyInProduction;
	if (environment === "sandbox" && input.keyMode !== "test") return AccountsError.LiveKeyInSandbox;
	return input;
}

/**
 * Stores a processor's key and webhook secret with payments before any MID names them (a processor without a secret
 * leaves the MID none); what the MID itself keeps of its processor.
 */
async function keepProcessor(
	deps: AccountsDeps,
	midId: number,
	input: ProcessorInput | null,
): Promise<MidProcessor | null | AccountsError> {
	if (input === null || input.type === "sandbox") return input;
	const stored = await deps.call("payments.storeCredentials", {
		midId,
		type: input.type,
		sealedSecretKey: input.sealedSecretKey,
		...(input.sealedWebhookSecret === undefined ? {} : { sealedWebhookSecret: input.sealedWebhookSecret }),
	});
	if (isFailure(stored)) return AccountsError.UnreadableProcessorKey;
	const webhookSecretLast4 = input.webhookSecretLast4 ?? null;
	if (input.type === "stripe") return { type: "stripe", keyMode: input.keyMode, secretKeyLast4: input.secretKeyLast4, webhookSecretLast4 };
	return {
		type: "adyen",
		keyMode: input.keyMode,
		merchantAccount: input.merchantAccount,
		liveUrlPrefix: input.liveUrlPrefix ?? null,
		apiKeyLast4: input.secretKeyLast4,
		hmacKeyLast4: webhookSecretLast4,
	};
}

export async function createMerchantAccount(
	deps: AccountsDeps,
	input: {
		accountId: number;
		name: string;
		group: string;
		cardTypes: CardType[];
		active: boolean;
		processor?: ProcessorInput | null;
		weight?: number;
		monthlyCap?: { amount: number; currency: string } | null;
	},
): Promise<MerchantAccountView | AccountsError> {
	const account = await deps.db.accounts.findById(input.accountId).lean();
	if (!account) return AccountsError.UnknownAccount;
	const monthlyCap = capOf(input.monthlyCap ?? null);
	if (typeof monthlyCap === "string") return monthlyCap;
	const allowed = allowedProcessor(account.environment, input.processor);
	if (typeof allowed === "string") return allowed;
	const id = await deps.db.ids.merchantAccounts.next();
	const processor = await keepProcessor(deps, id, allowed);
	if (typeof processor === "string") return processor;
	// Listed in its group first: a crash in between leaves the group naming a MID that does not exist, which a checkout skips.
	await addToGroup(deps, input.accountId, input.group, id);
	const doc = await deps.db.merchantAccounts.create({
		_id: id,
		accountId: input.accountId,
		name: input.name,
		group: input.group,
		cardTypes: [...new Set(input.cardTypes)],
		active: input.active,
		processor,
		weight: input.weight ?? 1,
		monthlyCap,
		createdAt: deps.now(),
	});
	return toMerchantAccountView(doc.toObject());
}

/** Renames, (de)activates, changes the brands of, or gives another processor or key to one MID; the group stays. */
export async function updateMerchantAccount(
	deps: AccountsDeps,
	input: {
		accountId: number;
		id: number;
		name?: string;
		cardTypes?: CardType[];
		active?: boolean;
		processor?: ProcessorInput | null;
		weight?: number;
		monthlyCap?: { amount: number; currency: string } | null;
	},
): Promise<MerchantAccountView | AccountsError> {
	const { accountId, id, processor: processorInput, monthlyCap: capInput, ...fields } = input;
	if (Object.keys(fields).length === 0 && processorInput === undefined && capInput === undefined) return AccountsError.NothingToChange;
	const account = await deps.db.accounts.findById(accountId).lean();
	if (!account) return AccountsError.UnknownAccount;
	const mid = await deps.db.merchantAccounts.findById(id).lean();
	if (mid?.accountId !== accountId) return AccountsError.UnknownMerchantAccount;
	const changes: Partial<MerchantAccountDoc> = { ...fields };
	if (fields.cardTypes) changes.cardTypes = [...new Set(fields.cardTypes)];
	if (capInput !== undefined) {
		const monthlyCap = capOf(capInput);
		if (typeof monthlyCap === "string") return monthlyCap;
		changes.monthlyCap = monthlyCap;
	}
	if (processorInput !== undefined) {
		const allowed = allowedProcessor(account.environment, processorInput);
		if (typeof allowed === "string") return allowed;
		const processor = await keepProcessor(deps, id, allowed);
		if (typeof processor === "string") return processor;
		changes.processor = processor;
	}
	const doc = await deps.db.merchantAccounts.findOneAndUpdate({ _id: id }, { $set: changes }, { returnDocument: "after" }).lean();
	return toMerchantAccountView(doc ?? { ...mid, ...changes });
}

function addToGroup(deps: AccountsDeps, accountId: number, group: string, merchantAccountId: number): Promise<unknown> {
	return deps.db.merchantAccountGroups.updateOne(
		{ _id: groupKey(accountId, group) },
		{ $setOnInsert: { accountId, group }, $addToSet: { merchantAccountIds: merchantAccountId } },
		{ upsert: true },
	);
}

/** The MIDs of the account's group, read by key. */
export async function merchantAccountsOfGroup(deps: AccountsDeps, accountId: number, group: string): Promise<MerchantAccountDoc[]> {
	const listing = await deps.db.merchantAccountGroups.findById(groupKey(accountId, group)).lean();
	if (!listing?.merchantAccountIds.length) return [];
	const docs = await deps.db.merchantAccounts.find({ _id: { $in: listing.merchantAccountIds } }).lean();
	return docs.filter(doc => doc.accountId === accountId && doc.group === group).sort((a, b) => a._id - b._id);
}

export async function listMerchantAccounts(
	deps: AccountsDeps,
	input: { accountId: number; group?: string },
): Promise<MerchantAccountView[] | AccountsError> {
	const account = await deps.db.accounts.findById(input.accountId).lean();
	if (!account) return AccountsError.UnknownAccount;
	const filter = input.group === undefined ? { accountId: input.accountId } : { accountId: input.accountId, group: input.group };
	const docs = await deps.db.merchantAccounts.find(filter).sort({ _id: 1 }).lean();
	return docs.map(doc => toMerchantAccountView(doc));
}

/** The MID's processor, read by key (payments asks, and keeps it 10 s). */
export async function merchantAccountProcessor(deps: AccountsDeps, input: { midId: number }): Promise<MerchantAccountProcessor | null> {
	const mid = await deps.db.merchantAccounts.findById(input.midId).lean();
	const account = mid ? await deps.db.accounts.findById(mid.accountId).lean() : null;
	if (!mid || !account) return null;
	return { midId: mid._id, accountId: mid.accountId, environment: account.environment, processor: mid.processor };
}
