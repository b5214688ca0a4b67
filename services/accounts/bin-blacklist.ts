// The account's blocked BINs: 6- or 8-digit card prefixes. A card is blocked
// when its first 6 or first 8 digits are listed.
import { isDuplicateKey } from "../../shared/persistence";
import type { AccountsDeps } from "./deps";
import { AccountsError } from "./errors";
import { accountExists } from "./merchant-accounts";
import { binKey } from "./models";

export async function addBlacklistedBin(
	deps: AccountsDeps,
	input: { accountId: number; bin: string },
): Promise<{ accountId: number; bin: string } | AccountsError> {
	if (!(await accountExists(deps, input.accountId))) return AccountsError.UnknownAccount;
	// Adding a listed BIN again is a no-op, so ops can repeat the call safely.
	await deps.db.blacklistedBins
		.updateOne(
			{ _id: binKey(input.accountId, input.bin) },
			{ $setOnInsert: { accountId: input.accountId, bin: input.bin, createdAt: deps.now() } },
			{ upsert: true },
		)
		.catch((err: unknown) => {
			// Two concurrent first adds: one upsert inserts, the other hits the unique key; both mean "listed".
			if (!isDuplicateKey(err)) throw err;
		});
	return { accountId: input.accountId, bin: input.bin };
}

export async function removeBlacklistedBin(
	deps: AccountsDeps,
	input: { accountId: number; bin: string },
): Promise<{ accountId: number; bin: string } | AccountsError> {
	const { deletedCount } = await deps.db.blacklistedBins.deleteOne({ _id: binKey(input.accountId, input.bin) });
	return deletedCount === 1 ? { accountId: input.accountId, bin: input.bin } : AccountsError.UnknownBin;
}

/** `cardPrefix` is the card's first 8 digits (6 for short BIN ranges); never the whole number. */
export async function isBinBlacklisted(deps: AccountsDeps, input: { accountId: number; cardPrefix: string }): Promise<boolean> {
	const keys = [...new Set([input.cardPrefix.slice(0, 6), input.cardPrefix.slice(0, 8)])].map(bin => binKey(input.accountId, bin));
	return (
		(
			await deps.db.blacklistedBins
				.find({ _id: { $in: keys } }, { _id: 1 })
				.limit(1)
				.lean()
		).length > 0
	);
}

export async function listBlacklistedBins(deps: AccountsDeps, input: { accountId: number }): Promise<string[] | AccountsError> {
	if (!(await accountExists(deps, input.accountId))) return AccountsError.UnknownAccount;
	const docs = await deps.db.blacklistedBins.find({ accountId: input.accountId }).sort({ bin: 1 }).lean();
	return docs.map(d => d.bin);
}
