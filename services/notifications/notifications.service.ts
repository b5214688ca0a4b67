// Webhooks: billing enqueues events (stored before the answer, keyed by the
// event id), and a worker on every node delivers them, signed, to the
// account's webhookUrl, retrying with backoff until the retry window closes.
// Operators list and redeliver through the admin API and the REPL.
import { LRUCache } from "lru-cache";
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { domainAction, domainErrors, idempotent } from "../../shared/action";
import { call } from "../../shared/call";
import { buyerBaseUrl, config } from "../../shared/config";
import type { AccountView, WebhookTarget } from "../../shared/contracts/accounts";
import type { WebhookEvent } from "../../shared/contracts/notifications";
import { dbMixin } from "../../shared/db.mixin";
import { pageOrBadRequest } from "../../shared/list-page";
import { createSchedule } from "../../shared/schedule";
import { enqueueEvents } from "./deliveries";
import { listDeliveries } from "./delivery-views";
import { ATTEMPT_SLOT_MS, createDeliveryWorker, type DeliveryWorker } from "./delivery-worker";
import type { NotificationsDeps } from "./deps";
import { enqueueEmails, enqueuePortalSignIn } from "./email-outbox";
import { type SmtpSender, smtpSender } from "./email-transport";
import { customerEmails } from "./email-views";
import { createEmailWorker, EMAIL_SLOT_MS, type EmailWorker } from "./email-worker";
import { NOTIFICATIONS_ERRORS } from "./errors";
import { getEvent, listEvents } from "./events";
import { createNotificationsDb, type NotificationsDb } from "./models";
import { redeliver, redeliverAccount } from "./redelivery";
import { schemas } from "./schemas";
import { releaseAllWaiting, releaseWaiting } from "./waiting";

interface Locals {
	db: NotificationsDb;
	deps: NotificationsDeps;
	worker: DeliveryWorker;
	targets: LRUCache<number, WebhookTarget>;
	accounts: LRUCache<number, AccountView>;
	emailWorker: EmailWorker;
	smtp: SmtpSender | null;
	enqueue(events: WebhookEvent[], resent: boolean): Promise<void>;
}

/** Accounts' webhook targets are kept this long at most; a change drops them at once (accounts.updated). */
const TARGET_CACHE_TTL_MS = 30_000;

const TARGET_LOOKUP_TIMEOUT_MS = 5000;
/** Billing renders the PDF when asked: longer than a lookup, well inside the email's lease. */
const INVOICE_PDF_TIMEOUT_MS = 15_000;

const { orFail } = domainErrors(NOTIFICATIONS_ERRORS);

/** An account's answer, from the cache while it holds it. */
function cachedLookup<T extends object>(cache: LRUCache<number, T>, lookUp: (accountId: number) => Promise<T>) {
	return async (accountId: number): Promise<T> => {
		const cached = cache.get(accountId);
		if (cached) return cached;
		const answer = await lookUp(accountId);
		cache.set(accountId, answer);
		return answer;
	};
}

const NotificationsService: ServiceSchema<ServiceSettingSchema, Record<string, never>, Locals> = {
	name: "notifications",
	mixins: [dbMixin("notifications", createNotificationsDb)],

	actions: {
		enqueueAll: {
			params: schemas.enqueueAll,
			async handler(ctx: Context<{ events: WebhookEvent[]; resent?: boolean }>) {
				await this.enqueue(ctx.params.events, ctx.params.resent ?? false);
				return { accepted: ctx.params.events.length };
			},
		},
		list: idempotent(domainAction(schemas.list, listDeliveries)),
		// The customer portal's sign-in email (email-outbox.ts), sent at once when the account's emails are on.
		enqueuePortalSignIn: {
			params: schemas.enqueuePortalSignIn,
			async handler(ctx: Context<Parameters<typeof enqueuePortalSignIn>[1]>) {
				const queued = await enqueuePortalSignIn(this.deps, ctx.params);
				if (queued.id) this.emailWorker.attemptNow([queued.id]);
				return { queued: queued.id !== null };
			},
		},
		// The events API (events.ts).
		events: idempotent(domainAction(schemas.events, listEvents, pageOrBadRequest)),
		getEvent: idempotent(domainAction(schemas.getEvent, getEvent)),
		// The emails sent to a customer (email-views.ts).
		customerEmails: idempotent(domainAction(schemas.customerEmails, customerEmails)),
		redeliverAccount: {
			params: schemas.redeliverAccount,
			async handler(ctx: Context<{ accountId: number }>) {
				const answer = await redeliverAccount(this.deps, ctx.params);
				this.worker.kick();
				return answer;
			},
		},
		redeliver: {
			params: schemas.redeliver,
			async handler(ctx: Context<{ eventId: string }>) {
				const result = orFail(await redeliver(this.deps, ctx.params));
				this.worker.kick();
				return result;
			},
		},
	},

	events: {
		"accounts.updated"(ctx: Context<{ accountId: number }>) {
			this.targets.delete(ctx.params.accountId);
			this.accounts.delete(ctx.params.accountId);
		},
		// Balanced (one node of the group): that node sends the account's backlog, oldest first.
		async "accounts.webhookUrlSet"(ctx: Context<{ accountId: number }>) {
			this.targets.delete(ctx.params.accountId);
			const released = await releaseWaiting(this.deps, ctx.params.accountId);
			if (released.sent || released.expired)
				this.logger.info(
					`Account ${ctx.params.accountId} has a webhook URL: ${released.sent} waiting webhooks sent, ${released.expired} expired`,
				);
		},
	},

	methods: {
		async enqueue(events: WebhookEvent[], resent: boolean): Promise<void> {
			// Stored, those the worker has room for already claimed: now the first attempts, without waiting for the next poll.
			const { deliveryIds, claimed } = await enqueueEvents(this.deps, events, { claimable: this.worker.freeSlots(), resent });
			const attempted = new Set(claimed.map(d => d._id));
			for (const delivery of claimed) this.worker.attempt(delivery);
			for (const id of deliveryIds) if (!attempted.has(id)) this.worker.deliver(id);
			// The buyers' emails the events make, stored before the answer too (email-outbox.ts); after the webhooks have
			// started, so an account lookup that fails (the relay then hands the events over again) delays no webhook.
			this.emailWorker.attemptNow(await enqueueEmails(this.deps, events));
		},
	},

	created() {
		this.targets = new LRUCache({ max: 10_000, ttl: TARGET_CACHE_TTL_MS });
		this.accounts = new LRUCache({ max: 10_000, ttl: TARGET_CACHE_TTL_MS });
	},

	async started() {
		const { webhookTimeoutMs, webhookRetryBaseMs, webhookRetryHours, webhookSandboxRetryHours, webhookWaitDays, timeZone } = config();
		const { smtpUrl, emailFrom, emailRetryBaseMs, emailRetryHours } = config();
		const baseUrl = buyerBaseUrl(config());
		this.smtp = smtpUrl ? smtpSender(smtpUrl) : null;
		this.deps = {
			db: this.db,
			attempts: createSchedule<string>(this.db.attemptSchedule, { slotMs: ATTEMPT_SLOT_MS, shards: 4, firstLookBackMs: 60 * 60 * 1000 }),
			nodeId: this.broker.nodeID,
			settings: {
				timeoutMs: webhookTimeoutMs,
				retryBaseMs: webhookRetryBaseMs,
				retryHours: webhookRetryHours,
				sandboxRetryHours: webhookSandboxRetryHours,
				waitDays: webhookWaitDays,
				timeZone,
			},
			// Cached per account; an account change (URL, environment) drops its entry on every node.
			webhookTarget: cachedLookup(this.targets, accountId =>
				call(this.broker, "accounts.webhookTarget", { accountId }, { timeout: TARGET_LOOKUP_TIMEOUT_MS }),
			),
			emails: {
				schedule: createSchedule<string>(this.db.emailSchedule, { slotMs: EMAIL_SLOT_MS, shards: 2, firstLookBackMs: 60 * 60 * 1000 }),
				send: this.smtp ? email => this.smtp!.send(email) : null,
				// Cached per account, as the webhook targets are; an account change drops its entry on every node.
				account: cachedLookup(this.accounts, accountId =>
					call(this.broker, "accounts.get", { accountId }, { timeout: TARGET_LOOKUP_TIMEOUT_MS }),
				),
				renewalTerms: (accountId, productId) =>
					call(this.broker, "accounts.renewalTerms", { accountId, productId }, { timeout: TARGET_LOOKUP_TIMEOUT_MS }),
				invoicePdf: async (accountId, invoiceId) => {
					const pdf = await call(this.broker, "invoicing.invoicePdf", { accountId, id: invoiceId }, { timeout: INVOICE_PDF_TIMEOUT_MS });
					return {
						filename: pdf.filename ?? `${invoiceId}.pdf`,
						contentType: pdf.contentType,
						content: Buffer.from(pdf.base64 ?? "", "base64"),
					};
				},
				cardUpdateLink: async (accountId, customerId) => {
					const made = await call(this.broker, "sessions.createCardUpdateLink", { accountId, customerId, baseUrl }).catch(() => null);
					return made?.link ?? null;
				},
				portalLink: async (accountId, customerId) =>
					(await call(this.broker, "portal.signInLink", { accountId, id: customerId, baseUrl })).url,
				settings: { from: emailFrom, retryBaseMs: emailRetryBaseMs, retryHours: emailRetryHours, baseUrl },
			},
			logger: this.logger,
			now: () => new Date(),
		};
		this.worker = createDeliveryWorker(this.deps);
		this.worker.start();
		this.emailWorker = createEmailWorker(this.deps);
		this.emailWorker.start();
		void releaseAllWaiting(this.deps).catch(err => this.logger.warn(`Releasing waiting webhooks failed: ${(err as Error).message}`));
	},

	async stopped() {
		await Promise.all([this.worker?.stop(), this.emailWorker?.stop()]);
		this.smtp?.close();
	},
};

export default NotificationsService;
