// What buyers may do in the customer portal (docs/portal.md#settings). Stored
// as the merchant set them; read complete, each setting not set at its default.
import { CANCELLATION_REASONS, type PortalContext, type PortalSettings } from "../../shared/contracts/accounts";
import { toCouponView } from "./coupons";
import type { AccountsDeps } from "./deps";
import { AccountsError } from "./errors";
import type { AccountDoc, CouponDoc } from "./models";
import { toProductRecord } from "./products";

/** Off until the merchant turns it on; then seats, card updates and cancelling at the period's end. */
export const DEFAULT_PORTAL_SETTINGS: PortalSettings = {
	enabled: false,
	changePlan: true,
	products: [],
	pause: false,
	updateCard: true,
	cancel: "period_end",
	cancellationReasons: [...CANCELLATION_REASONS],
	retentionCouponId: null,
	returnDomains: [],
	language: "en",
	emailSignIn: false,
};

export const portalSettingsOf = (account: Pick<AccountDoc, "portal">): PortalSettings => ({
	...DEFAULT_PORTAL_SETTINGS,
	...account.portal,
});

/** A change's `$set`: each setting by its own path, so those not sent keep their stored value. */
export const portalSettingsSet = (changes: Partial<PortalSettings> = {}) =>
	Object.fromEntries(Object.entries(changes).map(([name, value]) => [`portal.${name}`, value]));

/** The account's portal settings (the dashboard's page). */
export async function portalSettings(deps: AccountsDeps, input: { accountId: number }): Promise<PortalSettings | AccountsError> {
	const doc = await deps.db.accounts.findById(input.accountId, { portal: 1 }).lean();
	return doc ? portalSettingsOf(doc) : AccountsError.UnknownAccount;
}

/** Changes the settings given, the others keep their value; answers them all. */
export async function updatePortalSettings(
	deps: AccountsDeps,
	input: Partial<PortalSettings> & { accountId: number },
): Promise<PortalSettings | AccountsError> {
	const { accountId, ...changes } = input;
	const set = portalSettingsSet({
		...changes,
		...(changes.returnDomains ? { returnDomains: changes.returnDomains.map(d => d.toLowerCase()) } : {}),
	});
	if (Object.keys(set).length === 0) return AccountsError.NothingToChange;
	const doc = await deps.db.accounts.findOneAndUpdate({ _id: accountId }, { $set: set }, { returnDocument: "after" }).lean();
	return doc ? portalSettingsOf(doc) : AccountsError.UnknownAccount;
}

/**
 * What the portal shows of the account: its name and colour, its settings, the products a buyer may switch to (active
 * ones that renew, with their tax), and the retention coupon while it can be redeemed.
 */
export async function portalContext(deps: AccountsDeps, input: { accountId: number }): Promise<PortalContext | AccountsError> {
	const account = await deps.db.accounts.findById(input.accountId).lean();
	if (!account) return AccountsError.UnknownAccount;
	const settings = portalSettingsOf(account);
	const products = (await deps.db.products.find({ accountId: input.accountId }).sort({ _id: 1 }).lean()).map(doc =>
		toProductRecord(doc, account),
	);
	const coupon = settings.retentionCouponId === null ? null : await deps.db.coupons.findById(settings.retentionCouponId).lean();
	const offered = coupon?.accountId === input.accountId && coupon.active && !expired(coupon, deps.now()) ? toCouponView(coupon) : null;
	return {
		name: account.name,
		environment: account.environment,
		brandColor: account.emails?.brandColor ?? null,
		emailsEnabled: account.emails?.enabled ?? false,
		settings,
		products,
		retentionCoupon: offered,
	};
}

const expired = (coupon: CouponDoc, now: Date) => coupon.redeemBy !== null && coupon.redeemBy.getTime() <= now.getTime();
