// Everything a checkout needs from the account in one call: its environment,
// the product, the merchant accounts of the product's group, and whether the
// card's BIN is blocked. The checkout applies them in the spec's order.

import type { CheckoutContext } from "../../shared/contracts/accounts";
import { isBinBlacklisted } from "./bin-blacklist";
import type { AccountsDeps } from "./deps";
import { toMerchantAccountView } from "./merchant-accounts";
import { toProductRecord } from "./products";

export async function checkoutContext(
	deps: AccountsDeps,
	input: { accountId: number; productId: number; cardPrefix: string },
): Promise<CheckoutContext | null> {
	const [account, product, binBlacklisted] = await Promise.all([
		deps.db.accounts.findById(input.accountId, { environment: 1 }).lean(),
		deps.db.products.findOne({ _id: input.productId, accountId: input.accountId }).lean(),
		isBinBlacklisted(deps, input),
	]);
	if (!account) return null;
	const merchantAccounts = product
		? await deps.db.merchantAccounts.find({ accountId: input.accountId, group: product.merchantAccountGroup }).sort({ _id: 1 }).lean()
		: [];
	return {
		environment: account.environment,
		product: product ? toProductRecord(product) : null,
		merchantAccounts: merchantAccounts.map(toMerchantAccountView),
		binBlacklisted,
	};
}
