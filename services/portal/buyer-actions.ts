// What a buyer does in the portal (docs/portal.md#what-a-buyer-may-do): each
// action finds the session, the account's settings and the subscription, checks
// that the page offers the action now (portal-view.ts), and calls the billing
// action the merchant's API calls, with `by: "buyer"`. Billing judges the
// subscription again, and its refusals answer as they do on the API.
import type { PortalContext } from "../../shared/contracts/accounts";
import type { DocumentSummary } from "../../shared/contracts/invoicing";
import type { BuyerSubscription, PortalView, SubscriptionActions } from "../../shared/contracts/portal";
import { type SessionInput, sessionOf } from "./buyer-sessions";
import type { PortalDeps } from "./deps";
import { PortalError } from "./errors";
import type { PortalSessionDoc } from "./models";
import { actionsOf, offeredProducts, offerKey, portalView } from "./portal-view";

const by = "buyer" as const;

interface Scope {
	session: PortalSessionDoc;
	context: PortalContext;
	subs: BuyerSubscription[];
}

async function scopeOf(deps: PortalDeps, input: SessionInput, change: boolean): Promise<Scope | PortalError> {
	const session = await sessionOf(deps, input, change);
	if (typeof session === "string") return session;
	const { accountId, customerId } = session;
	const [context, subs] = await Promise.all([
		deps.call("accounts.portalContext", { accountId }),
		deps.call("billing.buyerSubscriptions", { accountId, customerId }),
	]);
	// Turned off since the link was made: the session ends with it.
	if (!context.settings.enabled || !subs) return PortalError.SessionEnded;
	return { session, context, subs };
}

export async function me(deps: PortalDeps, input: SessionInput): Promise<PortalView | PortalError> {
	const scope = await scopeOf(deps, input, false);
	if (typeof scope === "string") return scope;
	return portalView(deps, scope.session, scope.context, scope.subs);
}

type SubscriptionInput = SessionInput & { id: number };

/** The scope and the subscription, if the page offers `action` on it now. */
async function offering(
	deps: PortalDeps,
	input: SubscriptionInput,
	action: keyof SubscriptionActions | null,
): Promise<(Scope & { sub: BuyerSubscription }) | PortalError> {
	const scope = await scopeOf(deps, input, action !== null);
	if (typeof scope === "string") return scope;
	const sub = scope.subs.find(s => s.id === input.id);
	if (!sub) return PortalError.UnknownSubscription;
	if (action && !actionsOf(scope.context, sub)[action]) return PortalError.NotOffered;
	return { ...scope, sub };
}

const done = { done: true } as const;

/** The subscription's invoices and credit notes, newest first, with their buyer links. */
export async function documents(deps: PortalDeps, input: SubscriptionInput): Promise<{ data: PortalDocument[] } | PortalError> {
	const found = await offering(deps, input, null);
	if (typeof found === "string") return found;
	const query = { accountId: found.session.accountId, customerId: input.id, limit: 100 };
	const [invoices, creditNotes] = await Promise.all([deps.call("invoicing.invoices", query), deps.call("invoicing.creditNotes", query)]);
	const view = (kind: PortalDocument["kind"]) => (doc: DocumentSummary) => ({
		kind,
		id: doc.id,
		number: doc.number,
		issuedAt: doc.issuedAt,
		total: doc.total,
		currency: doc.currency,
		url: doc.url,
		pdfUrl: `${doc.url}/pdf`,
	});
	const all = [...invoices.data.map(view("invoice")), ...creditNotes.data.map(view("creditNote"))];
	return { data: all.sort((a, b) => b.issuedAt.localeCompare(a.issuedAt) || b.id - a.id) };
}

export interface PortalDocument {
	kind: "invoice" | "creditNote";
	id: number;
	number: string;
	issuedAt: string;
	total: number;
	currency: string;
	url: string;
	pdfUrl: string;
}

/** A binding quote for another plan or seat count, applied at once and prorated. */
export async function quote(deps: PortalDeps, input: SubscriptionInput & { productId?: number; quantity?: number }) {
	const found = await offering(deps, input, "changePlan");
	if (typeof found === "string") return found;
	const productId = input.productId ?? found.sub.productId;
	const offered = productId === found.sub.productId || offeredProducts(found.context).some(p => p.id === productId);
	if (!offered) return PortalError.ProductNotOffered;
	const { accountId } = found.session;
	return deps.call("billing.quoteChange", { accountId, id: input.id, productId, quantity: input.quantity, mode: "now_prorated", by });
}

/** The quote applied, exactly as quoted: its charge, if any, is the quote's. */
export async function change(deps: PortalDeps, input: SubscriptionInput & { quoteId: string }) {
	const found = await offering(deps, input, "changePlan");
	if (typeof found === "string") return found;
	const { accountId } = found.session;
	return deps.call("billing.changeSubscription", { accountId, id: input.id, quoteId: input.quoteId, mode: "now_prorated" });
}

export async function pause(deps: PortalDeps, input: SubscriptionInput) {
	const found = await offering(deps, input, "pause");
	if (typeof found === "string") return found;
	await deps.call("billing.pauseCustomer", { accountId: found.session.accountId, id: input.id, by });
	return done;
}

export async function resume(deps: PortalDeps, input: SubscriptionInput) {
	const found = await offering(deps, input, "resume");
	if (typeof found === "string") return found;
	await deps.call("billing.resumeCustomer", { accountId: found.session.accountId, id: input.id, by });
	return done;
}

export interface CancelInput extends SubscriptionInput {
	when: "period_end" | "now";
	reason: string;
	comment?: string;
}

/** At the period's end (undone until then) or at once, with one of the account's reasons. */
export async function cancel(deps: PortalDeps, input: CancelInput) {
	const found = await offering(deps, input, input.when === "now" ? "cancelNow" : "cancelAtPeriodEnd");
	if (typeof found === "string") return found;
	if (!found.context.settings.cancellationReasons.includes(input.reason as never)) return PortalError.ReasonNotOffered;
	const { accountId } = found.session;
	const said = { reason: input.reason, ...(input.comment ? { comment: input.comment } : {}) };
	if (input.when === "now") await deps.call("billing.cancelNow", { accountId, customerId: input.id, by, ...said });
	else await deps.call("billing.scheduleCancellation", { accountId, id: input.id, by, ...said });
	return done;
}

export async function undoCancel(deps: PortalDeps, input: SubscriptionInput) {
	const found = await offering(deps, input, "undoCancel");
	if (typeof found === "string") return found;
	await deps.call("billing.undoCancellation", { accountId: found.session.accountId, id: input.id, by });
	return done;
}

/** The retention coupon, taken once per subscription: the claim is a unique key, written before the coupon is attached. */
export async function acceptOffer(deps: PortalDeps, input: SubscriptionInput) {
	const found = await offering(deps, input, "cancel");
	if (typeof found === "string") return found;
	const coupon = found.context.retentionCoupon;
	const { accountId } = found.session;
	if (!coupon) return PortalError.NotOffered;
	// Taken before shows as the coupon on the subscription; a take racing this one loses on the claim's key.
	if (found.sub.coupon?.couponId === coupon.id) return PortalError.OfferTaken;
	const key = offerKey(accountId, input.id);
	const claimed = await deps.db.offers
		.create({ _id: key, accountId, customerId: input.id, couponId: coupon.id, takenAt: deps.now() })
		.then(() => true)
		.catch((err: { code?: number }) => {
			if (err.code === 11000) return false;
			throw err;
		});
	if (!claimed) return PortalError.OfferTaken;
	try {
		await deps.call("billing.attachCoupon", { accountId, id: input.id, couponId: coupon.id });
	} catch (err) {
		// Not attached (redeemed up, expired meanwhile): the claim is given back, and billing's refusal answered.
		await deps.db.offers.deleteOne({ _id: key });
		throw err;
	}
	return done;
}

/** A card update session for the portal's own page: a new card, which also pays a renewal owed (docs/recovery.md). */
export async function cardSession(deps: PortalDeps, input: SubscriptionInput & { domain: string }) {
	const scope = await offering(deps, input, null);
	if (typeof scope === "string") return scope;
	const offers = actionsOf(scope.context, scope.sub);
	if (!offers.updateCard && !offers.payOverdue) return PortalError.NotOffered;
	const sessionId = await deps.call("sessions.create", { accountId: scope.session.accountId, domain: input.domain, customerId: input.id });
	return { sessionId };
}
