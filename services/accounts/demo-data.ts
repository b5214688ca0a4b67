// The sandbox demo account that `npm start` creates on an empty database, so
// a newcomer can pay with a test card at /demo straight away, and finds the
// buyers' emails its payments make in npm start's Mailpit (emails on).
import { CARD_TYPES, type ProductView, type RenewalPeriod } from "../../shared/contracts/accounts";
import { createAccount } from "./account-admin";
import { createCoupon } from "./coupons";
import type { AccountsDeps } from "./deps";
import { createMerchantAccount } from "./merchant-accounts";
import { updatePortalSettings } from "./portal-settings";
import { createProduct, type ProductInput, toProductView } from "./products";

export interface DemoData {
	accountId: number;
	apiToken: string;
	products: ProductView[];
}

/** Creates the demo data when the database holds no account yet; otherwise returns null. */
export async function seedDemo(deps: AccountsDeps): Promise<DemoData | null> {
	if ((await deps.db.accounts.countDocuments()) > 0) return null;
	const account = await createAccount(deps, { name: "Demo Shop", environment: "sandbox", demo: true, emails: { enabled: true } });
	const accountId = account.id;
	await createMerchantAccount(deps, { accountId, name: "Demo MID A", group: "default", cardTypes: ["visa", "mastercard"], active: true });
	await createMerchantAccount(deps, { accountId, name: "Demo MID B", group: "default", cardTypes: [...CARD_TYPES], active: true });
	const monthly = { every: 1, unit: "month" } as const;
	const common = {
		accountId,
		currency: "EUR",
		allowMultipleSubscriptions: false,
		authentication: "WHEN_REQUIRED" as const,
		merchantAccountGroup: "default",
		active: true,
	};
	const products = [
		await createProduct(deps, { ...common, name: "Monthly plan (charged now)", amount: 9.99, billing: "CHARGE", renewal: monthly }),
		await createProduct(deps, {
			...common,
			name: "7-day trial, card held",
			amount: 19.99,
			billing: "PREAUTHORIZE",
			trialDays: 7,
			renewal: monthly,
		}),
		await createProduct(deps, { ...common, name: "14-day free trial", amount: 4.99, billing: "SCHEDULE", trialDays: 14, renewal: monthly }),
		await meteredProduct(deps, common, monthly),
	];
	// A promotion code to try in the demo's card frame: 10 % off the first charge.
	await createCoupon(deps, { accountId, code: "WELCOME10", percentOff: 10, duration: "once" });
	// The customer portal, on (docs/portal.md): seats and the monthly plan, pause, cancelling either way, and a
	// retention offer of 20 % for 3 months.
	const stay = await createCoupon(deps, { accountId, code: "STAY20", percentOff: 20, duration: "repeating", durationInPeriods: 3 });
	const retentionCouponId = typeof stay === "string" ? null : stay.id;
	const portal = {
		enabled: true,
		products: [(products[0] as ProductView).id],
		pause: true,
		cancel: "period_end_or_now" as const,
		retentionCouponId,
	};
	await updatePortalSettings(deps, { accountId, ...portal, returnDomains: ["localhost"], emailSignIn: true });
	return { accountId, apiToken: account.apiToken, products: products as ProductView[] };
}

/**
 * Usage billing (docs/usage.md): two meters the usage service keeps, and a plan of €19 a month plus its API calls
 * (the first 1,000 free, then 0.2 cents each, 0.1 cents past 10,000) and its peak storage (€0.50 a GB).
 */
async function meteredProduct(deps: AccountsDeps, common: { accountId: number } & Record<string, unknown>, monthly: RenewalPeriod) {
	const { accountId } = common;
	await deps.call("usage.createMeter", { accountId, code: "api_calls", name: "API calls", aggregation: "count" });
	await deps.call("usage.createMeter", { accountId, code: "storage_gb", name: "Storage (GB, peak)", aggregation: "max", property: "gb" });
	return createProduct(deps, {
		...(common as Omit<ProductInput, "name" | "amount" | "billing" | "renewal"> & { accountId: number }),
		name: "API plan (usage billed monthly)",
		amount: 19,
		billing: "CHARGE",
		renewal: monthly,
		usagePrices: [
			{
				meter: "api_calls",
				model: "graduated",
				tiers: [
					{ upTo: 1000, unitAmount: "0", flatAmount: 0 },
					{ upTo: 10_000, unitAmount: "0.2", flatAmount: 0 },
					{ upTo: null, unitAmount: "0.1", flatAmount: 0 },
				],
			},
			{ meter: "storage_gb", model: "per_unit", unitAmount: "50" },
		],
	});
}

/** The demo account's id and its active products, or null when there is no demo account. */
export async function demoAccount(deps: AccountsDeps): Promise<{ accountId: number; products: ProductView[] } | null> {
	const account = await deps.db.accounts.findOne({ demo: true }).sort({ _id: 1 }).lean();
	if (!account) return null;
	const products = await deps.db.products.find({ accountId: account._id, active: true }).sort({ _id: 1 }).lean();
	return { accountId: account._id, products: products.map(toProductView) };
}
