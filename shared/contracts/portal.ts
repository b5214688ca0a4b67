// What the customer portal's page reads (GET /portal/api/me, docs/portal.md#the-pages-api): the portal service
// builds it, the page in public/portal/ shows it.
import type { CancellationReason, PortalLanguage, PortalSettings, RenewalPeriod } from "./accounts";
import type { CustomerCouponView, CustomerView } from "./billing";

export interface PortalView {
	account: { name: string; brandColor: string | null };
	locale: PortalLanguage;
	returnUrl: string | null;
	csrfToken: string;
	/** ISO 8601: when the session ends. */
	expiresAt: string;
	settings: {
		changePlan: boolean;
		pause: boolean;
		updateCard: boolean;
		cancel: PortalSettings["cancel"];
		cancellationReasons: CancellationReason[];
		retentionOffer: RetentionOfferView | null;
	};
	/** The plans a buyer may switch to. */
	products: PortalProduct[];
	subscriptions: PortalSubscription[];
}

export interface RetentionOfferView {
	couponId: number;
	percentOff: number | null;
	amountOff: number | null;
	currency: string | null;
	duration: "once" | "repeating" | "forever";
	durationInPeriods: number | null;
}

export interface PortalProduct {
	id: number;
	name: string;
	/** Decimal unit price in `currency`. */
	amount: number;
	currency: string;
	renewal: RenewalPeriod | null;
}

export interface PortalSubscription {
	id: number;
	status: string;
	product: PortalProduct;
	quantity: number;
	tax: { rateBps: number; inclusive: boolean };
	nextRenewalTimestamp: string | null;
	cancelAt: string | null;
	pause: { pausedAt: string; resumeAt: string | null } | null;
	pendingChange: { productId: number; quantity: number; at: string } | null;
	coupon: CustomerCouponView | null;
	credit: number;
	/** Brand and last 4 digits only: nothing more of a card reaches the browser. */
	card: { brand: string; last4: string; expiry: string };
	/** A renewal is owed (a declined one being retried, or SUSPENDED): a new card pays it. */
	overdue: boolean;
	retentionOfferUsed: boolean;
	actions: SubscriptionActions;
}

/** What the page may offer now: the account's settings and the subscription's state both allow it. */
export interface SubscriptionActions {
	changePlan: boolean;
	pause: boolean;
	resume: boolean;
	updateCard: boolean;
	payOverdue: boolean;
	/** Some way to cancel: at the period's end, at once, or both. */
	cancel: boolean;
	cancelAtPeriodEnd: boolean;
	cancelNow: boolean;
	undoCancel: boolean;
}

// What the portal asks billing for (BillingActions).

/** A customer as the customer portal shows it (billing.buyerSubscriptions): its card's last 4 digits too. */
export interface BuyerSubscription extends CustomerView {
	cardLast4: string;
	periodsBilled: number;
}

/** A buyer's call on one of its subscriptions (the customer portal). */
export interface BuyerCall {
	accountId: number;
	id: number;
	by: "buyer";
}

/** A change the buyer asks for: applied at once, prorated (docs/portal.md#decisions). */
export interface BuyerChange extends BuyerCall {
	productId?: number;
	quantity?: number;
	mode: "now_prorated";
}

/** A binding quote as POST /api/customer/{id}/change-quote answers it (docs/api.md#subscription-changes). */
export interface ChangeQuoteView {
	quoteId: string;
	currency: string;
	charge: number;
	total: number;
	expiresAt: string;
	[field: string]: unknown;
}

export interface PortalActions {
	/** A fresh single-use link for a sign-in email (notifications, as it sends it): 15 minutes to open. */
	"portal.signInLink": { params: { accountId: number; id: number; baseUrl: string }; result: { url: string; expiresAt: string } };
}

/** Billing's actions the customer portal calls (BillingActions extends them). */
export interface BuyerCalls {
	// The customer portal's (services/portal/): `by: "buyer"` on what they write; refusals throw the API's ApiError.
	/** The customer and its email's other subscriptions on the account; null for an unknown or another account's. */
	"billing.buyerSubscriptions": { params: { accountId: number; customerId: number }; result: BuyerSubscription[] | null };
	"billing.buyerByEmail": {
		params: { accountId: number; email: string };
		result: { customerId: number; name: string; productId: number } | null;
	};
	"billing.quoteChange": { params: BuyerChange; result: ChangeQuoteView };
	/** The quote's change: its event says who quoted it (the buyer's quotes are the portal's). */
	"billing.changeSubscription": { params: { accountId: number; id: number; quoteId: string; mode: "now_prorated" }; result: unknown };
	"billing.pauseCustomer": { params: BuyerCall; result: CustomerView };
	"billing.resumeCustomer": { params: BuyerCall; result: CustomerView };
	"billing.scheduleCancellation": { params: BuyerCall & { reason?: string; comment?: string }; result: CustomerView };
	"billing.undoCancellation": { params: BuyerCall; result: CustomerView };
	"billing.cancelNow": {
		params: { accountId: number; customerId: number; by: "buyer"; reason?: string; comment?: string };
		result: { success: boolean; message: string };
	};
	/** No webhook: nothing to say who attached it. */
	"billing.attachCoupon": { params: { accountId: number; id: number; couponId: number }; result: CustomerView };
}
