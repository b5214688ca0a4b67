// What billing needs of an account to renew one of its products: the product,
// the days declined renewals are retried on, and the MIDs of the product's
// group (a MID's refusal is retried on another of them).

import { config } from "../../shared/config";
import type { RenewalTerms } from "../../shared/contracts/accounts";
import type { AccountsDeps } from "./deps";
import { merchantAccountsOfGroup, toMerchantAccountView } from "./merchant-accounts";
import type { AccountDoc } from "./models";
import { toProductRecord } from "./products";

/** The account's own retry days, or the service's default (RENEWAL_RETRY_DAYS). */
export const retryDaysOf = (account: Pick<AccountDoc, "renewalRetryDays">): number[] =>
	account.renewalRetryDays ?? config().renewalRetryDays;

export async function renewalTerms(deps: AccountsDeps, input: { accountId: number; productId: number }): Promise<RenewalTerms | null> {
	const [account, product] = await Promise.all([
		deps.db.accounts.findById(input.accountId, { renewalRetryDays: 1, invoicing: 1 }).lean(),
		deps.db.products.findById(input.productId).lean(),
	]);
	// Read by key, then checked: another account's product is no product.
	if (!account || product?.accountId !== input.accountId) return null;
	const merchantAccounts = await merchantAccountsOfGroup(deps, input.accountId, product.merchantAccountGroup);
	return {
		product: toProductRecord(product, account),
		retryDays: retryDaysOf(account),
		merchantAccounts: merchantAccounts.map(mid => toMerchantAccountView(mid)),
	};
}
