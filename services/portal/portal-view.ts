// GET /portal/api/me: what the page shows (shared/contracts/portal.ts), and
// what each subscription offers now. The account's settings and the
// subscription's state both decide an action; billing judges it again when
// the buyer asks, as it does for the merchant's API.
import type { PortalContext, ProductRecord } from "../../shared/contracts/accounts";
import type { BuyerSubscription, PortalProduct, PortalSubscription, PortalView, SubscriptionActions } from "../../shared/contracts/portal";
import type { PortalDeps } from "./deps";
import type { PortalSessionDoc } from "./models";

const productView = (p: ProductRecord): PortalProduct => ({
	id: p.id,
	name: p.name,
	amount: p.amount,
	currency: p.currency,
	renewal: p.renewal,
});

/** The products a buyer may switch to: those the settings list that are active and renew. */
export function offeredProducts(context: PortalContext): ProductRecord[] {
	const listed = new Set(context.settings.products);
	return context.products.filter(p => listed.has(p.id) && p.active && p.renewal !== null);
}

/** Whether the retention offer can still be made to this subscription. */
const offerOpen = (context: PortalContext, sub: BuyerSubscription, taken: boolean) =>
	context.retentionCoupon !== null && !taken && sub.coupon?.couponId !== context.retentionCoupon.id;

export function actionsOf(context: PortalContext, sub: BuyerSubscription): SubscriptionActions {
	const { settings } = context;
	const active = sub.status === "ACTIVE";
	const overdue = isOverdue(sub);
	const running = active && sub.renewalActive && !overdue;
	// A period's end to cancel at: nothing else is to happen at it.
	const periodEnd = running && !sub.cancelAt && !sub.pendingChange;
	// No paid time is left to keep (paused, suspended, a renewal owed): cancelling at once loses the buyer nothing.
	const nothingPaidLeft = sub.status === "PAUSED" || sub.status === "SUSPENDED" || (active && overdue);
	const cancelAtPeriodEnd = settings.cancel !== "off" && periodEnd;
	const cancelNow =
		settings.cancel !== "off" &&
		!sub.cancelAt &&
		(settings.cancel === "period_end_or_now" ? sub.status !== "UNSUBSCRIBED" : nothingPaidLeft);
	return {
		changePlan: settings.changePlan && periodEnd,
		pause: settings.pause && periodEnd,
		resume: settings.pause && sub.status === "PAUSED",
		updateCard: settings.updateCard && !overdue && (active || sub.status === "PAUSED"),
		payOverdue: settings.updateCard && overdue,
		cancel: cancelAtPeriodEnd || cancelNow,
		cancelAtPeriodEnd,
		cancelNow,
		undoCancel: settings.cancel !== "off" && active && sub.cancelAt !== null,
	};
}

export const isOverdue = (sub: BuyerSubscription) => sub.status === "SUSPENDED" || (sub.status === "ACTIVE" && sub.attempts > 0);

function subscriptionView(context: PortalContext, sub: BuyerSubscription, taken: boolean): PortalSubscription {
	const product = context.products.find(p => p.id === sub.productId);
	const expiry = sub.cardExpiredTime;
	return {
		id: sub.id,
		status: sub.status,
		product: product ? productView(product) : { id: sub.productId, name: `#${sub.productId}`, amount: 0, currency: "EUR", renewal: null },
		quantity: sub.quantity,
		tax: product ? { rateBps: product.tax.rateBps, inclusive: product.tax.inclusive } : { rateBps: 0, inclusive: true },
		nextRenewalTimestamp: sub.nextRenewalTimestamp,
		cancelAt: sub.cancelAt,
		pause: sub.pause,
		pendingChange: sub.pendingChange,
		coupon: sub.coupon,
		credit: sub.credit,
		card: { brand: sub.cardType, last4: sub.cardLast4, expiry: `${expiry.slice(0, 2)}/${expiry.slice(2)}` },
		overdue: isOverdue(sub),
		retentionOfferUsed: !offerOpen(context, sub, taken),
		actions: actionsOf(context, sub),
	};
}

export const offerKey = (accountId: number, customerId: number) => `${accountId}:${customerId}`;

/** Which of the subscriptions took the retention offer already: one read by key. */
async function offersTaken(deps: PortalDeps, accountId: number, subs: BuyerSubscription[]): Promise<Set<number>> {
	const docs = await deps.db.offers.find({ _id: { $in: subs.map(s => offerKey(accountId, s.id)) } }, { customerId: 1 }).lean();
	return new Set(docs.map(d => d.customerId));
}

export async function portalView(
	deps: PortalDeps,
	session: PortalSessionDoc,
	context: PortalContext,
	subs: BuyerSubscription[],
): Promise<PortalView> {
	const taken = await offersTaken(deps, session.accountId, subs);
	const coupon = context.retentionCoupon;
	return {
		account: { name: context.name, brandColor: context.brandColor },
		locale: session.locale ?? context.settings.language,
		returnUrl: session.returnUrl,
		csrfToken: session.csrfToken,
		expiresAt: session.expiresAt.toISOString(),
		settings: {
			changePlan: context.settings.changePlan,
			pause: context.settings.pause,
			updateCard: context.settings.updateCard,
			cancel: context.settings.cancel,
			cancellationReasons: context.settings.cancellationReasons,
			retentionOffer: coupon
				? {
						couponId: coupon.id,
						percentOff: coupon.percentOff,
						amountOff: coupon.amountOff,
						currency: coupon.currency,
						duration: coupon.duration,
						durationInPeriods: coupon.durationInPeriods,
					}
				: null,
		},
		products: offeredProducts(context).map(productView),
		subscriptions: subs.map(sub => subscriptionView(context, sub, taken.has(sub.id))),
	};
}
