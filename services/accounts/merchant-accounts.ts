import type { CardType, MerchantAccountProcessor, MerchantAccountView } from "../../shared/contracts/accounts";
import type { AccountsDeps } from "./deps";
import { AccountsError } from "./errors";
import { binKey, groupKey, type MerchantAccountDoc } from "./models";

export function toMerchantAccountView(doc: MerchantAccountDoc): MerchantAccountView {
	return { id: doc._id, accountId: doc.accountId, name: doc.name, group: doc.group, cardTypes: doc.cardTypes, active: doc.active };
}

export async function accountExists(deps: AccountsDeps, accountId: number): Promise<boolean> {
	return (await deps.db.accounts.countDocuments({ _id: accountId })) > 0;
}

export async function createMerchantAccount(
	deps: AccountsDeps,
	input: { accountId: number; name: string; group: string; cardTypes: CardType[]; active: boolean },
): Promise<MerchantAccountView | AccountsError> {
	if (!(await accountExists(deps, input.accountId))) return AccountsError.UnknownAccount;
	const id = await deps.db.ids.merchantAccounts.next();
	// Listed in its group first: a crash in between leaves the group naming a MID that does not exist, which a checkout skips.
	await addToGroup(deps, input.accountId, input.group, id);
	const doc = await deps.db.merchantAccounts.create({
		_id: id,
		...input,
		cardTypes: [...new Set(input.cardTypes)],
		createdAt: deps.now(),
	});
	return toMerchantAccountView(doc.toObject());
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

/**
 * Keys written before they existed (a database from an earlier version): BINs
 * stored under another _id are stored again by key, and MIDs are listed in
 * their groups. Runs when the service starts; the collections are small.
 */
export async function keyEarlierData(deps: AccountsDeps): Promise<void> {
	for (const bin of await deps.db.blacklistedBins.find({}).lean()) {
		const key = binKey(bin.accountId, bin.bin);
		if (String(bin._id) === key) continue;
		await deps.db.blacklistedBins.updateOne(
			{ _id: key },
			{ $setOnInsert: { accountId: bin.accountId, bin: bin.bin, createdAt: bin.createdAt } },
			{ upsert: true },
		);
		await deps.db.blacklistedBins.deleteOne({ _id: bin._id });
	}
	if ((await deps.db.merchantAccountGroups.estimatedDocumentCount()) > 0) return;
	for (const mid of await deps.db.merchantAccounts.find({}).lean()) await addToGroup(deps, mid.accountId, mid.group, mid._id);
}

export async function listMerchantAccounts(
	deps: AccountsDeps,
	input: { accountId: number; group?: string },
): Promise<MerchantAccountView[] | AccountsError> {
	if (!(await accountExists(deps, input.accountId))) return AccountsError.UnknownAccount;
	const filter = input.group === undefined ? { accountId: input.accountId } : { accountId: input.accountId, group: input.group };
	const docs = await deps.db.merchantAccounts.find(filter).sort({ _id: 1 }).lean();
	return docs.map(toMerchantAccountView);
}

/**
 * The MID's gateway, read by key. Until MIDs name their own, a sandbox account's MIDs use the sandbox and a
 * production account's have none.
 */
export async function merchantAccountProcessor(deps: AccountsDeps, input: { midId: number }): Promise<MerchantAccountProcessor | null> {
	const mid = await deps.db.merchantAccounts.findById(input.midId).lean();
	const account = mid ? await deps.db.accounts.findById(mid.accountId).lean() : null;
	if (!mid || !account) return null;
	return {
		midId: mid._id,
		accountId: mid.accountId,
		environment: account.environment,
		processor: account.environment === "sandbox" ? { type: "sandbox" } : null,
	};
}
