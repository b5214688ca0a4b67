// The REST surface, in one table per route. Aliases are derived from it, and
// so are the success status, the plain-text responses and the services the
// gateway needs to be healthy.
export interface Endpoint {
	action: string;
	/** 200 unless named. */
	status?: number;
	/** Answered as text/plain instead of JSON. */
	plainText?: boolean;
	/** Where parameters come from besides the path: GET and DELETE use the query, POST and PATCH the body, unless named. */
	input?: "query" | "body";
	/**
	 * Where a 201's Location header points: `item`, the created resource at `<path>/<id>`;
	 * `list`, the list at the request's path that now holds it; `parent`, the resource one
	 * segment up (a rotated token's account). Set for every endpoint answering 201.
	 */
	location?: "item" | "list" | "parent";
	/** Malformed requests answer the checkout's `{code: "INVALID_REQUEST", errors}` instead of BAD_REQUEST. */
	checkoutErrors?: boolean;
	/** The `Idempotency-Key` header is passed to the action as `idempotencyKey`. */
	idempotencyKey?: boolean;
	/** A processor's event: the header its signature comes in, passed to the action as `signature` (Adyen signs inside the body). */
	signatureHeader?: string;
	/** A GET that changes state (the spec's refund): HEAD is not routed to it. */
	changesState?: boolean;
	/** Dashboard: what the audit log calls it; only an operator may, with the session's CSRF token. */
	change?: string;
	/** Dashboard: a read only an operator may make. */
	operatorOnly?: boolean;
	/**
	 * The action's `baseUrl` is the service's public address, for the links it answers: PUBLIC_BASE_URL, else the
	 * dashboard page's own origin, or the API request's (its Host).
	 */
	publicBaseUrl?: boolean;
	/** The host name the request was sent to is the action's `domain` (a page of the service's own). */
	hostAsDomain?: boolean;
	/** `processor.secretKey` is sealed to the payments service before the request goes on (processor-keys.ts). */
	sealsProcessorKey?: boolean;
	/** Dashboard: the only body fields taken, a narrower change than its action's (a MID's processor, not its routing). */
	bodyFields?: readonly string[];
	/** The action answers a file (`{contentType, base64 | text, filename?}`: a PDF, a page), sent as it is (route-hooks.ts). */
	file?: boolean;
	/**
	 * The buyer's browser, sent back by a processor's page: the answer is `status` (a 303) to this page of the same
	 * address, without a body, whatever the request held (route-hooks.ts).
	 */
	redirectTo?: string;
}

/** `/api`, Bearer API token. */
export const apiEndpoints: Record<string, Endpoint> = {
	"POST /session": { action: "sessions.create", plainText: true, input: "query" },
	"GET /session": { action: "sessions.get" },
	"GET /customer/:id": { action: "billing.getCustomer" },
	"GET /customers": { action: "billing.customers" },
	"GET /transactions": { action: "billing.transactions" },
	"GET /customer/:id/transactions": { action: "billing.customerTransactions" },
	"GET /events": { action: "notifications.events" },
	"GET /events/:id": { action: "notifications.getEvent" },
	"GET /transaction/:id": { action: "billing.getTransaction" },
	"GET /refund/:id": { action: "refunds.refund", idempotencyKey: true, changesState: true },
	"GET /disputes": { action: "billing.disputes" },
	// Subscription metrics by day, week or month (docs/metrics.md).
	"GET /metrics": { action: "metrics.figures" },
	"GET /disputes/:id": { action: "billing.getDispute" },
	"POST /disputes/:id/evidence": { action: "billing.submitDisputeEvidence" },
	"POST /unsubscribe/:customerId": { action: "billing.unsubscribe" },
	"POST /customer/:id/pause": { action: "billing.pauseCustomer" },
	"POST /customer/:id/resume": { action: "billing.resumeCustomer" },
	// A cancellation at the period's end (docs/subscriptions.md#cancel-at-the-periods-end).
	"POST /customer/:id/cancel-at-period-end": { action: "billing.scheduleCancellation" },
	"DELETE /customer/:id/cancel-at-period-end": { action: "billing.undoCancellation" },
	// A single-use link to the customer portal (docs/portal.md#links); `baseUrl` is where the portal is served.
	"POST /customer/:id/portal-session": { action: "portal.createLink", publicBaseUrl: true },
	// A subscription's change in place (docs/subscriptions.md).
	"POST /customer/:id/change-quote": { action: "billing.quoteChange" },
	"POST /customer/:id/change": { action: "billing.changeSubscription", idempotencyKey: true },
	"DELETE /customer/:id/pending-change": { action: "billing.cancelPendingChange" },
	"POST /customer/:id/credit-refund": { action: "billing.refundCredit" },
	// A coupon on an existing customer, from its next charge (docs/coupons.md).
	"POST /customer/:id/coupon": { action: "billing.attachCoupon" },
	"DELETE /customer/:id/coupon": { action: "billing.removeCoupon" },
	// Invoices and credit notes (docs/invoices.md).
	"GET /invoices": { action: "invoicing.invoices" },
	"GET /invoice/:id": { action: "invoicing.getInvoice" },
	"GET /invoice/:id/pdf": { action: "invoicing.invoicePdf", file: true },
	"GET /credit-notes": { action: "invoicing.creditNotes" },
	"GET /credit-note/:id": { action: "invoicing.getCreditNote" },
	"GET /credit-note/:id/pdf": { action: "invoicing.creditNotePdf", file: true },
	// Usage billing (docs/usage.md): a batch of events (its own route, for its larger body), a customer's usage and events.
	"POST /usage": { action: "usage.ingest" },
	"GET /customer/:id/usage": { action: "billing.customerUsage" },
	"GET /customer/:id/usage-events": { action: "usage.customerEvents" },
};

/** The endpoints whose bodies may be as large as USAGE_BODY_LIMIT (a batch of 1,000 events): a route of their own. */
export const LARGE_BODY_ENDPOINTS = ["POST /usage"];
export const USAGE_BODY_LIMIT = "3mb";

/** `/api`, no token. */
export const publicEndpoints: Record<string, Endpoint> = {
	"GET /openapi.json": { action: "gateway.openapi" },
	"GET /checkout/key": { action: "checkout.key" },
	"POST /checkout": { action: "checkout.submit", checkoutErrors: true },
	// The frame, once the buyer's 3-D Secure challenge ended (docs/authentication.md).
	"POST /checkout/continue": { action: "checkout.continue", checkoutErrors: true },
	// The sandbox's challenge page: the tester's choice.
	"POST /sandbox/challenges/:challengeId": { action: "payments.sandboxChallenge" },
	"POST /card-update": { action: "checkout.updateCard", checkoutErrors: true },
	// The frame, once the buyer's challenge on a card update's renewal owed ended.
	"POST /card-update/continue": { action: "checkout.continueCardUpdate", checkoutErrors: true },
	"POST /card-update-link": { action: "sessions.openCardUpdateLink", hostAsDomain: true },
	// A buyer's signed link to an invoice or a credit note: the page and its PDF (docs/invoices.md#links).
	"GET /buyer/invoices/:id/:signature": { action: "invoicing.buyerInvoice", file: true },
	"GET /buyer/invoices/:id/:signature/pdf": { action: "invoicing.buyerInvoicePdf", file: true },
	"GET /buyer/credit-notes/:id/:signature": { action: "invoicing.buyerCreditNote", file: true },
	"GET /buyer/credit-notes/:id/:signature/pdf": { action: "invoicing.buyerCreditNotePdf", file: true },
};

/**
 * `/api/processors`, no token: what a MID's processor sends us, each request signed with the MID's own secret, which the
 * action verifies on the body as it came (docs/api.md#stripe-events, docs/api.md#adyen-notifications); and the buyer
 * a processor's page sends back (docs/api.md#adyen-3-d-secure).
 */
export const processorEndpoints: Record<string, Endpoint> = {
	"POST /stripe/:midId/events": { action: "billing.stripeEvent", signatureHeader: "stripe-signature" },
	"POST /adyen/:midId/notifications": { action: "billing.adyenNotification" },
	// An Adyen MID's 3-D Secure page sends the buyer back here (the connector's returnUrlOf): the redirectResult is kept,
	// once, and the buyer goes on to the page that tells the card frame the challenge ended. It keeps nothing more when
	// repeated, so HEAD is routed too, and passes on no redirectResult (request-params.ts:readBuyerReturn).
	"GET /adyen/returns/:token": { action: "payments.adyenReturn", status: 303, redirectTo: "/checkout/challenge-return.html" },
};

/** `/demo`, no token: the demo page's session (npm start only). */
export const demoEndpoints: Record<string, Endpoint> = {
	"GET /session": { action: "checkout.demoSession" },
};

/** `/actuator`, no token: uptime monitors (HEAD too). */
export const actuatorEndpoints: Record<string, Endpoint> = {
	"GET /health": { action: "gateway.health" },
};

/** `/admin`, Bearer ADMIN_TOKEN. */
export const adminEndpoints: Record<string, Endpoint> = {
	"POST /accounts": { action: "accounts.create", status: 201, location: "item" },
	"GET /accounts": { action: "accounts.list" },
	"GET /accounts/:accountId": { action: "accounts.get" },
	"PATCH /accounts/:accountId": { action: "accounts.update" },
	"POST /accounts/:accountId/tokens": { action: "accounts.rotateToken", status: 201, location: "parent" },
	"POST /accounts/:accountId/merchant-accounts": {
		action: "accounts.createMerchantAccount",
		status: 201,
		location: "list",
		sealsProcessorKey: true,
	},
	"PATCH /accounts/:accountId/merchant-accounts/:id": { action: "accounts.updateMerchantAccount", sealsProcessorKey: true },
	"GET /accounts/:accountId/merchant-accounts": { action: "accounts.listMerchantAccounts" },
	"GET /accounts/:accountId/merchant-account-health": { action: "billing.midHealth" },
	"GET /accounts/:accountId/metrics": { action: "metrics.figures" },
	"POST /accounts/:accountId/products": { action: "accounts.createProduct", status: 201, location: "list" },
	"GET /accounts/:accountId/products": { action: "accounts.listProducts" },
	"PATCH /accounts/:accountId/products/:productId": { action: "accounts.updateProduct" },
	"POST /accounts/:accountId/meters": { action: "usage.createMeter", status: 201, location: "list" },
	"GET /accounts/:accountId/meters": { action: "usage.list" },
	"POST /accounts/:accountId/bin-blacklist": { action: "accounts.addBlacklistedBin", status: 201, location: "list" },
	"GET /accounts/:accountId/bin-blacklist": { action: "accounts.listBlacklistedBins" },
	"DELETE /accounts/:accountId/bin-blacklist/:bin": { action: "accounts.removeBlacklistedBin" },
	"POST /accounts/:accountId/blocked-buyers": { action: "accounts.addBlockedBuyer", status: 201, location: "list" },
	"GET /accounts/:accountId/blocked-buyers": { action: "accounts.listBlockedBuyers" },
	"DELETE /accounts/:accountId/blocked-buyers/:kind/:value": { action: "accounts.removeBlockedBuyer" },
	"POST /accounts/:accountId/coupons": { action: "accounts.createCoupon", status: 201, location: "list" },
	"GET /accounts/:accountId/coupons": { action: "accounts.listCoupons" },
	"POST /accounts/:accountId/coupons/:couponId/deactivate": { action: "accounts.deactivateCoupon" },
	"GET /accounts/:accountId/customers": { action: "billing.listCustomers" },
	"GET /accounts/:accountId/customers/:customerId/transactions": { action: "billing.listTransactions" },
	"GET /accounts/:accountId/customers/:customerId/emails": { action: "notifications.customerEmails" },
	"GET /accounts/:accountId/recovery": { action: "billing.recovery" },
	"POST /accounts/:accountId/dashboard-users": { action: "dashboard.createUser", status: 201, location: "list" },
	"GET /accounts/:accountId/dashboard-users": { action: "dashboard.listUsers" },
	"PATCH /accounts/:accountId/dashboard-users/:userId": { action: "dashboard.updateUser" },
	"GET /sandbox/operations": { action: "payments.sandboxOperations" },
	"GET /accounts/:accountId/webhooks": { action: "notifications.list" },
	"POST /accounts/:accountId/webhooks/redeliver": { action: "notifications.redeliverAccount" },
	"POST /webhooks/:eventId/redeliver": { action: "notifications.redeliver" },
	"POST /renewals/run": { action: "billing.runRenewals" },
	"POST /accounts/:accountId/clock": { action: "billing.advanceClock" },
};

/** `/dashboard/api`, no session: signing in (dashboard-routes.ts). */
export const dashboardSignInEndpoints: Record<string, Endpoint> = {
	"POST /sign-in": { action: "dashboard.signIn" },
};

/**
 * `/dashboard/api`, a dashboard session (cookie). Reads and changes go to the
 * same actions as the REST API, with the session's account; `change` marks
 * what only an operator may do, with the CSRF token, and what is audited;
 * `operatorOnly` what only an operator may read.
 */
export const dashboardEndpoints: Record<string, Endpoint> = {
	"POST /sign-out": { action: "dashboard.signOut" },
	"GET /me": { action: "gateway.dashboardMe" },
	"GET /customers": { action: "billing.customers" },
	"GET /customers/:id": { action: "billing.getCustomer" },
	"GET /customers/:id/transactions": { action: "billing.customerTransactions" },
	"GET /customers/:customerId/emails": { action: "notifications.customerEmails" },
	// A customer's invoices, newest first, with their lines (docs/dashboard.md#a-customers-invoices).
	"GET /customers/:customerId/invoices": { action: "invoicing.invoices" },
	"GET /email-settings": { action: "accounts.emailSettings" },
	"PATCH /email-settings": { action: "accounts.updateEmailSettings", change: "email settings" },
	"GET /portal-settings": { action: "accounts.portalSettings" },
	"PATCH /portal-settings": { action: "accounts.updatePortalSettings", change: "portal settings" },
	"GET /transactions": { action: "billing.transactions" },
	"GET /events": { action: "notifications.events" },
	"GET /webhooks": { action: "notifications.list" },
	"GET /products": { action: "accounts.listProducts" },
	"GET /merchant-accounts": { action: "accounts.listMerchantAccounts" },
	"GET /merchant-accounts/health": { action: "billing.midHealth" },
	// A MID's processor (docs/dashboard.md#a-mids-processor): its keys sealed on arrival, as on /admin; nothing else of the MID.
	"PATCH /merchant-accounts/:id/processor": {
		action: "accounts.updateMerchantAccount",
		change: "set processor",
		sealsProcessorKey: true,
		bodyFields: ["processor"],
	},
	"GET /metrics": { action: "metrics.figures" },
	"GET /disputes": { action: "billing.disputes" },
	"GET /audit": { action: "dashboard.audit", operatorOnly: true },
	"GET /coupons": { action: "accounts.listCoupons" },
	"POST /coupons": { action: "accounts.createCoupon", change: "create coupon" },
	"POST /coupons/:couponId/deactivate": { action: "accounts.deactivateCoupon", change: "deactivate coupon" },
	"POST /transactions/:id/refund": { action: "refunds.refund", idempotencyKey: true, change: "refund" },
	"POST /customers/:customerId/unsubscribe": { action: "billing.unsubscribe", change: "unsubscribe" },
	"POST /customers/:id/pause": { action: "billing.pauseCustomer", change: "pause" },
	"POST /customers/:id/resume": { action: "billing.resumeCustomer", change: "resume" },
	"POST /customers/:id/cancel-at-period-end": { action: "billing.scheduleCancellation", change: "cancel at period end" },
	"DELETE /customers/:id/cancel-at-period-end": { action: "billing.undoCancellation", change: "undo cancellation" },
	// A subscription's change in place (docs/subscriptions.md). A quote is stored but changes nothing the customer
	// pays, so only the change that applies it is audited; an operator's all the same, as it is only asked for to apply.
	"POST /customers/:id/change-quote": { action: "billing.quoteChange", operatorOnly: true },
	"POST /customers/:id/change": { action: "billing.changeSubscription", change: "change subscription" },
	"DELETE /customers/:id/pending-change": { action: "billing.cancelPendingChange", change: "cancel change" },
	"POST /customers/:customerId/card-update-link": {
		action: "sessions.createCardUpdateLink",
		change: "card update link",
		publicBaseUrl: true,
	},
	"POST /webhooks/:eventId/redeliver": { action: "notifications.redeliver", change: "redeliver" },
	"POST /clock": { action: "billing.advanceClock", change: "advance the test clock" },
	// Usage billing (docs/usage.md): the account's meters, a customer's usage this period and its events.
	"GET /meters": { action: "usage.list" },
	"POST /meters": { action: "usage.createMeter", change: "create meter" },
	"GET /customers/:id/usage": { action: "billing.customerUsage" },
	"GET /customers/:id/usage-events": { action: "usage.customerEvents" },
};

/** The route table as moleculer-web aliases, with a HEAD beside every GET that is safe to repeat. */
/**
 * /portal/api: the customer portal's page (portal-routes.ts). A session cookie, and on every change the session's CSRF
 * token and the same origin; `:id` is one of the session's buyer's subscriptions.
 */
export const portalEndpoints: Record<string, Endpoint> = {
	"POST /open": { action: "portal.open" },
	"POST /sign-in": { action: "portal.requestSignIn" },
	"GET /me": { action: "portal.me" },
	"GET /subscriptions/:id/documents": { action: "portal.documents" },
	"POST /subscriptions/:id/change-quote": { action: "portal.quote" },
	"POST /subscriptions/:id/change": { action: "portal.change" },
	"POST /subscriptions/:id/pause": { action: "portal.pause" },
	"POST /subscriptions/:id/resume": { action: "portal.resume" },
	"POST /subscriptions/:id/cancel": { action: "portal.cancel" },
	"DELETE /subscriptions/:id/cancel": { action: "portal.undoCancel" },
	"POST /subscriptions/:id/retention-offer": { action: "portal.acceptOffer" },
	"POST /subscriptions/:id/card-session": { action: "portal.cardSession" },
	"POST /sign-out": { action: "portal.signOut" },
};

export function aliasesOf(endpoints: Record<string, Endpoint>): Record<string, string> {
	return Object.fromEntries(
		Object.entries(endpoints).flatMap(([route, endpoint]) => {
			const head = route.startsWith("GET ") && !endpoint.changesState ? [[route.replace(/^GET /, "HEAD "), endpoint.action]] : [];
			return [[route, endpoint.action], ...head];
		}),
	);
}

const byAction = new Map(
	[apiEndpoints, publicEndpoints, processorEndpoints, adminEndpoints, demoEndpoints, portalEndpoints].flatMap(table =>
		Object.values(table).map(e => [e.action, e] as const),
	),
);

export function endpointFor(action: string | undefined): Endpoint | undefined {
	return action ? byAction.get(action) : undefined;
}

/** Services behind the gateway's endpoints: the health check reports each. */
export const requiredServices = [
	...new Set(
		[...byAction.keys(), ...Object.values(dashboardEndpoints).map(e => e.action)].map(a => a.split(".")[0]).filter(s => s !== "gateway"),
	),
].sort();
