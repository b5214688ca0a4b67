// Creating merchants' accounts, rotating their API tokens, and resolving a
// token to its account on every API request.
import type {
	AccountView,
	AuthenticatedAccount,
	DisputeProtection,
	EmailSettings,
	Environment,
	InvoiceSettings,
	PortalSettings,
	WebhookTarget,
} from "../../shared/contracts/accounts";
import { sha256Hex } from "../../shared/crypto";
import type { AccountsDeps } from "./deps";
import { AccountsError } from "./errors";
import { invoiceSettingsOf, invoiceSettingsSet } from "./invoice-settings";
import type { AccountDoc } from "./models";
import { portalSettingsOf, portalSettingsSet } from "./portal-settings";
import { retryDaysOf } from "./renewal-terms";
import { newApiToken, newWebhookSecret } from "./secrets";

const inOrder = (days: number[]) => [...days].sort((a, b) => a - b);

export const DEFAULT_ROTATION_GRACE_SECONDS = 24 * 60 * 60;

/** docs/disputes.md#protection: a disputing buyer is unsubscribed and their card blocked; their email only when asked. */
export const DEFAULT_DISPUTE_PROTECTION: DisputeProtection = {
	unsubscribe: true,
	blockCard: true,
	blockEmail: false,
	refundEarlyFraudWarnings: true,
};

/** The settings a new account is stored with: each one it was not given at its default. */
export const protectionOf = (input: { disputeProtection?: Partial<DisputeProtection> }): DisputeProtection => ({
	...DEFAULT_DISPUTE_PROTECTION,
	...input.disputeProtection,
});

/** docs/emails.md#settings: off, from the service's address, in English. */
export const DEFAULT_EMAIL_SETTINGS: EmailSettings = {
	enabled: false,
	from: null,
	fromName: null,
	replyTo: null,
	language: "en",
	brandColor: null,
};

/** The account's email settings, each one it was never given at its default. */
export const emailsOf = (doc: Pick<AccountDoc, "emails">): EmailSettings => ({ ...DEFAULT_EMAIL_SETTINGS, ...doc.emails });

/** Each setting given by its own path (`<field>.<name>`): those not sent keep their stored value, with no read first. */
const byPath = (field: string, settings: object | undefined) =>
	Object.entries(settings ?? {}).map(([name, value]) => [`${field}.${name}`, value]);

export function toAccountView(doc: AccountDoc): AccountView {
	return {
		id: doc._id,
		name: doc.name,
		environment: doc.environment,
		webhookUrl: doc.webhookUrl,
		renewalRetryDays: retryDaysOf(doc),
		disputeProtection: doc.disputeProtection,
		emails: emailsOf(doc),
		invoicing: invoiceSettingsOf(doc),
		portal: portalSettingsOf(doc),
	};
}

export async function createAccount(
	deps: AccountsDeps,
	input: {
		name: string;
		environment: Environment;
		webhookUrl?: string | null;
		renewalRetryDays?: number[];
		disputeProtection?: Partial<DisputeProtection>;
		emails?: Partial<EmailSettings>;
		invoicing?: Partial<InvoiceSettings>;
		portal?: Partial<PortalSettings>;
		demo?: boolean;
	},
): Promise<AccountView & { apiToken: string; webhookSecret: string }> {
	const now = deps.now();
	const account = await deps.db.accounts.create({
		_id: await deps.db.ids.accounts.next(),
		name: input.name,
		environment: input.environment,
		webhookUrl: input.webhookUrl ?? null,
		renewalRetryDays: input.renewalRetryDays ? inOrder(input.renewalRetryDays) : null,
		webhookSecret: newWebhookSecret(),
		demo: input.demo ?? false,
		// Stored complete: a later change of the defaults does not change what an account was created with.
		disputeProtection: protectionOf(input),
		emails: emailsOf(input),
		...(input.invoicing ? { invoicing: input.invoicing } : {}),
		...(input.portal ? { portal: input.portal } : {}),
		createdAt: now,
	});
	const apiToken = newApiToken(input.environment);
	await deps.db.apiTokens.create({ _id: sha256Hex(apiToken), accountId: account._id, createdAt: now, expiresAt: null });
	return { ...toAccountView(account.toObject()), apiToken, webhookSecret: account.webhookSecret };
}

export async function updateAccount(
	deps: AccountsDeps,
	input: {
		accountId: number;
		webhookUrl?: string | null;
		environment?: Environment;
		renewalRetryDays?: number[] | null;
		disputeProtection?: Partial<DisputeProtection>;
		emails?: Partial<EmailSettings>;
		invoicing?: Partial<InvoiceSettings>;
		portal?: Partial<PortalSettings>;
	},
): Promise<AccountView | AccountsError> {
	const { accountId, disputeProtection, emails, invoicing, portal, ...changes } = input;
	if (changes.renewalRetryDays) changes.renewalRetryDays = inOrder(changes.renewalRetryDays);
	const settings = [...byPath("disputeProtection", disputeProtection), ...byPath("emails", emails)];
	const set = { ...changes, ...Object.fromEntries(settings), ...invoiceSettingsSet(invoicing), ...portalSettingsSet(portal) };
	if (Object.keys(set).length === 0) return AccountsError.NothingToChange;
	const doc = await deps.db.accounts.findOneAndUpdate({ _id: accountId }, { $set: set }, { returnDocument: "after" }).lean();
	return doc ? toAccountView(doc) : AccountsError.UnknownAccount;
}

/** The account's email settings (the dashboard's page). */
export async function emailSettings(deps: AccountsDeps, input: { accountId: number }): Promise<EmailSettings | AccountsError> {
	const doc = await deps.db.accounts.findById(input.accountId, { emails: 1 }).lean();
	return doc ? emailsOf(doc) : AccountsError.UnknownAccount;
}

/** Changes the email settings given, the others keep their value; answers them all. */
export async function updateEmailSettings(
	deps: AccountsDeps,
	input: Partial<EmailSettings> & { accountId: number },
): Promise<EmailSettings | AccountsError> {
	const { accountId, ...emails } = input;
	const updated = await updateAccount(deps, { accountId, emails });
	return typeof updated === "string" ? updated : updated.emails;
}

/** Issues a new token; the account's current tokens keep working for `graceSeconds`. */
export async function rotateToken(
	deps: AccountsDeps,
	input: { accountId: number; graceSeconds?: number },
): Promise<{ apiToken: string } | AccountsError> {
	const account = await deps.db.accounts.findById(input.accountId).lean();
	if (!account) return AccountsError.UnknownAccount;
	const now = deps.now();
	const graceEnds = new Date(now.getTime() + (input.graceSeconds ?? DEFAULT_ROTATION_GRACE_SECONDS) * 1000);
	const apiToken = newApiToken(account.environment);
	await deps.db.apiTokens.create({ _id: sha256Hex(apiToken), accountId: account._id, createdAt: now, expiresAt: null });
	await deps.db.apiTokens.updateMany(
		{ accountId: account._id, _id: { $ne: sha256Hex(apiToken) }, $or: [{ expiresAt: null }, { expiresAt: { $gt: graceEnds } }] },
		{ $set: { expiresAt: graceEnds } },
	);
	return { apiToken };
}

/** The token's account, or null for an unknown or expired token. Takes the token's SHA-256, never the token. */
export async function authenticate(deps: AccountsDeps, input: { tokenHash: string }): Promise<AuthenticatedAccount | null> {
	const token = await deps.db.apiTokens.findById(input.tokenHash).lean();
	if (!token || (token.expiresAt && token.expiresAt.getTime() <= deps.now().getTime())) return null;
	const account = await deps.db.accounts.findById(token.accountId, { environment: 1 }).lean();
	if (!account) return null;
	return { accountId: account._id, environment: account.environment, tokenExpiresAt: token.expiresAt?.getTime() ?? null };
}

export async function getAccount(deps: AccountsDeps, input: { accountId: number }): Promise<AccountView | AccountsError> {
	const doc = await deps.db.accounts.findById(input.accountId).lean();
	return doc ? toAccountView(doc) : AccountsError.UnknownAccount;
}

export async function listAccounts(deps: AccountsDeps): Promise<AccountView[]> {
	return (await deps.db.accounts.find().sort({ _id: 1 }).lean()).map(toAccountView);
}

/** Where and how to sign the account's webhooks (notifications only). */
export async function webhookTarget(deps: AccountsDeps, input: { accountId: number }): Promise<WebhookTarget | AccountsError> {
	const doc = await deps.db.accounts.findById(input.accountId).lean();
	if (!doc) return AccountsError.UnknownAccount;
	return { accountId: doc._id, environment: doc.environment, webhookUrl: doc.webhookUrl, webhookSecret: doc.webhookSecret };
}
