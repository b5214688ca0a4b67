// What an account's invoices say of the seller and the tax its prices carry
// (docs/invoices.md#settings). Stored as the operator set them; read complete,
// each setting not set at its default, so a later change of a default applies
// to accounts that never chose.
import type { InvoiceSettings, ProductTax } from "../../shared/contracts/accounts";
import type { AccountDoc, ProductDoc } from "./models";

export const DEFAULT_INVOICE_SETTINGS: InvoiceSettings = {
	legalName: null,
	address: null,
	taxId: null,
	email: null,
	invoicePrefix: "INV",
	creditNotePrefix: "CN",
	language: "en",
	taxRateBps: 0,
	pricesIncludeTax: true,
};

export const invoiceSettingsOf = (account: Pick<AccountDoc, "invoicing">): InvoiceSettings => ({
	...DEFAULT_INVOICE_SETTINGS,
	...account.invoicing,
});

/** The product's own rate, else its account's; included or added as the account says. */
export function productTaxOf(account: Pick<AccountDoc, "invoicing"> | null, product: Pick<ProductDoc, "taxRateBps">): ProductTax {
	const settings = invoiceSettingsOf(account ?? {});
	return { rateBps: product.taxRateBps ?? settings.taxRateBps, inclusive: settings.pricesIncludeTax };
}

/** A change's `$set`: each setting by its own path, so those not sent keep their stored value. */
export const invoiceSettingsSet = (changes: Partial<InvoiceSettings> = {}) =>
	Object.fromEntries(Object.entries(changes).map(([name, value]) => [`invoicing.${name}`, value]));
