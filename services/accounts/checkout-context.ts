// Everything a checkout needs from the account in one call: its environment,
// the product, the merchant accounts of the product's group, and whether it
// blocks buyers. The checkout applies them in the spec's order; checkout nodes
// cache the answer until the account changes (accounts.updated), and ask
// whether a card's BIN is blocked apart (isBinBlacklisted), since that answer
// depends on the card, as whether the buyer is (isBuyerBlocked, only when the
// account blocks any).

import type { CheckoutContext } from "../../shared/contracts/accounts";
import type { AccountsDeps } from "./deps";
import { merchantAccountsOfGroup, toMerchantAccountView } from "./merchant-accounts";
import { toProductRecord } from "./products";

export async function checkoutContext(
	deps: AccountsDeps,
	input: { accountId: number; productId: number },
): Promise<CheckoutContext | null> {
	const [account, found] = await Promise.all([
		deps.db.accounts.findById(input.accountId, { environment: 1, buyerBlocks: 1, invoicing: 1 }).lean(),
		deps.db.products.findById(input.productId).lean(),
	]);
	if (!account) return null;
	// Read by key, then checked: another account's product is no product.
	const product = found?.accountId === input.accountId ? found : null;
	const merchantAccounts = product ? await merchantAccountsOfGroup(deps, input.accountId, product.merchantAccountGroup) : [];
	return {
		environment: account.environment,
		product: product ? toProductRecord(product, account) : null,
		merchantAccounts: merchantAccounts.map(mid => toMerchantAccountView(mid)),
		blocksBuyers: account.buyerBlocks === true,
	};
}
