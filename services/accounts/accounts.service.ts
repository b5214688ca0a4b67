// Merchants' accounts and everything configured on them: API tokens,
// products, merchant accounts (MIDs), the BIN blacklist, blocked buyers and
// coupons (with their redemptions, which checkout and billing take and settle).
// The admin API and the REPL call these actions; the gateway calls
// `authenticate`, billing `blockBuyer` when a dispute opens.
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { domainAction, domainErrors, errorAsValue, idempotent } from "../../shared/action";
import { broadcast, callsThrough, emit } from "../../shared/call";
import { dbMixin } from "../../shared/db.mixin";
import {
	authenticate,
	createAccount,
	emailSettings,
	getAccount,
	listAccounts,
	rotateToken,
	updateAccount,
	updateEmailSettings,
	webhookTarget,
} from "./account-admin";
import { addBlacklistedBin, isBinBlacklisted, listBlacklistedBins, removeBlacklistedBin } from "./bin-blacklist";
import { addBlockedBuyer, blockBuyer, isBuyerBlocked, listBlockedBuyers, removeBlockedBuyer } from "./blocked-buyers";
import { checkoutContext } from "./checkout-context";
import { confirmCoupon, couponFor, createCoupon, deactivateCoupon, listCoupons, redeemCoupon, releaseCoupon } from "./coupons";
import { demoAccount, seedDemo } from "./demo-data";
import type { AccountsDeps } from "./deps";
import { ACCOUNTS_ERRORS } from "./errors";
import { createMerchantAccount, listMerchantAccounts, merchantAccountProcessor, updateMerchantAccount } from "./merchant-accounts";
import { type AccountsDb, createAccountsDb } from "./models";
import { portalContext, portalSettings, updatePortalSettings } from "./portal-settings";
import { createProduct, getProduct, listProducts, updateProduct } from "./products";
import { renewalTerms } from "./renewal-terms";
import { schemas } from "./schemas";

interface Locals {
	db: AccountsDb;
	deps: AccountsDeps;
}

const { orFail, action } = domainErrors(ACCOUNTS_ERRORS);

/** A change to what a checkout reads (products, MIDs, blocked BINs and buyers): once made, every node drops what it cached of the account. */
function announced<P extends { accountId: number }>(schema: ReturnType<typeof action<AccountsDeps, P, unknown>>) {
	return {
		...schema,
		async handler(this: Locals, ctx: Context<P>) {
			const result = await (schema.handler as (ctx: Context<P>) => Promise<unknown>).call(this, ctx);
			await broadcast(ctx, "accounts.updated", { accountId: ctx.params.accountId });
			return result;
		},
	};
}

const AccountsService: ServiceSchema<ServiceSettingSchema, Record<string, never>, Locals> = {
	name: "accounts",
	mixins: [dbMixin("accounts", createAccountsDb)],

	actions: {
		create: action(schemas.create, createAccount),
		update: {
			params: schemas.update,
			async handler(ctx: Context<{ accountId: number }>) {
				const result = orFail(await updateAccount(this.deps, ctx.params));
				// Notifications nodes drop their cached webhook target for the account, checkout nodes its checkout context.
				broadcast(ctx, "accounts.updated", { accountId: ctx.params.accountId });
				// One notifications node sends the events that waited for a URL.
				if (result.webhookUrl) emit(ctx, "accounts.webhookUrlSet", { accountId: ctx.params.accountId });
				return result;
			},
		},
		get: idempotent(action(schemas.get, getAccount)),
		// The dashboard's email settings page (docs/emails.md#settings): only these settings, never the webhook URL.
		emailSettings: idempotent(action(schemas.get, emailSettings)),
		updateEmailSettings: {
			params: schemas.updateEmailSettings,
			async handler(ctx: Context<{ accountId: number }>) {
				const result = orFail(await updateEmailSettings(this.deps, ctx.params));
				broadcast(ctx, "accounts.updated", { accountId: ctx.params.accountId });
				return result;
			},
		},
		// The customer portal (docs/portal.md): its settings, edited in the dashboard, and what it shows of the account.
		portalSettings: idempotent(action(schemas.get, portalSettings)),
		updatePortalSettings: action(schemas.updatePortalSettings, updatePortalSettings),
		portalContext: idempotent(action(schemas.get, portalContext)),
		webhookTarget: idempotent(action(schemas.get, webhookTarget)),
		list: idempotent(action(schemas.none, listAccounts)),
		rotateToken: {
			params: schemas.rotateToken,
			async handler(ctx: Context<{ accountId: number; graceSeconds?: number }>) {
				const result = orFail(await rotateToken(this.deps, ctx.params));
				// Gateways drop their cached token lookups for the account.
				broadcast(ctx, "accounts.tokensRotated", { accountId: ctx.params.accountId });
				return result;
			},
		},
		authenticate: idempotent(action(schemas.authenticate, authenticate)),
		createMerchantAccount: announced(action(schemas.createMerchantAccount, createMerchantAccount)),
		updateMerchantAccount: announced(action(schemas.updateMerchantAccount, updateMerchantAccount)),
		listMerchantAccounts: idempotent(action(schemas.listMerchantAccounts, listMerchantAccounts)),
		merchantAccountProcessor: idempotent(action(schemas.merchantAccountProcessor, merchantAccountProcessor)),
		createProduct: announced(action(schemas.createProduct, createProduct)),
		updateProduct: announced(action(schemas.updateProduct, updateProduct)),
		getProduct: idempotent(action(schemas.getProduct, getProduct)),
		renewalTerms: idempotent(action(schemas.renewalTerms, renewalTerms)),
		listProducts: idempotent(action(schemas.listProducts, listProducts)),
		addBlacklistedBin: announced(action(schemas.bin, addBlacklistedBin)),
		removeBlacklistedBin: announced(action(schemas.bin, removeBlacklistedBin)),
		listBlacklistedBins: idempotent(action(schemas.listBlacklistedBins, listBlacklistedBins)),
		isBinBlacklisted: idempotent(action(schemas.isBinBlacklisted, isBinBlacklisted)),
		// Blocking repeats safely ($setOnInsert), so the broker may retry it.
		blockBuyer: idempotent(announced(action(schemas.blockBuyer, blockBuyer))),
		addBlockedBuyer: announced(action(schemas.addBlockedBuyer, addBlockedBuyer)),
		removeBlockedBuyer: announced(action(schemas.removeBlockedBuyer, removeBlockedBuyer)),
		listBlockedBuyers: idempotent(action(schemas.listBlockedBuyers, listBlockedBuyers)),
		isBuyerBlocked: idempotent(action(schemas.isBuyerBlocked, isBuyerBlocked)),
		createCoupon: action(schemas.createCoupon, createCoupon),
		listCoupons: idempotent(action(schemas.listCoupons, listCoupons)),
		deactivateCoupon: idempotent(action(schemas.deactivateCoupon, deactivateCoupon)),
		// Checkout and billing: a coupon's refusal is a value (the checkout's code), never an exception.
		couponFor: idempotent(domainAction(schemas.couponFor, couponFor, errorAsValue)),
		// Keyed by the customer: a repeat takes nothing more, so all three are safe to retry.
		redeemCoupon: idempotent(domainAction(schemas.redeemCoupon, redeemCoupon, errorAsValue)),
		confirmCoupon: idempotent(action(schemas.settleCoupon, confirmCoupon)),
		releaseCoupon: idempotent(action(schemas.settleCoupon, releaseCoupon)),
		seedDemo: action(schemas.none, seedDemo),
		demoAccount: idempotent(action(schemas.none, demoAccount)),
		checkoutContext: idempotent(action(schemas.checkoutContext, checkoutContext)),
	},

	async started() {
		this.deps = { db: this.db, call: callsThrough(this.broker), now: () => new Date() };
	},
};

export default AccountsService;
