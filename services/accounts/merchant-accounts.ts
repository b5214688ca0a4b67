import type { CardType, MerchantAccountView } from "../../shared/contracts/accounts";
import type { AccountsDeps } from "./deps";
import { AccountsError } from "./errors";
import type { MerchantAccountDoc } from "./models";

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
	const doc = await deps.db.merchantAccounts.create({
		_id: await deps.db.ids.merchantAccounts.next(),
		...input,
		cardTypes: [...new Set(input.cardTypes)],
		createdAt: deps.now(),
	});
	return toMerchantAccountView(doc.toObject());
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
