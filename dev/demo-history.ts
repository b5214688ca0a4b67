// A few months of history for the sandbox demo account, made on the first
// `npm start` (bin/start.ts) when it creates the account, so the dashboard's
// home page has figures to show (docs/operations.md#the-demo-account). It goes
// through the service's public surfaces only, as a merchant and its buyers
// would: sessions and checkouts with the sandbox's test cards (encrypted as the
// SDK encrypts them), the merchant's API (changes, pause, resume, unsubscribe,
// refund, card update) and the admin test clock, moved ahead week by week, so
// each change counts on the clock's day (docs/metrics.md#days-and-keys). The
// account has emails on, so its receipts, dunning emails and a card expiry
// warning land in npm start's Mailpit (docs/emails.md).
import { CompactEncrypt, importJWK, type JWK } from "jose";

/** The sandbox's test cards the history uses (docs/api.md#test-cards, docs/recovery.md#test-cards). */
const CARD = {
	visa: "4242424242424242",
	mastercard: "5555555555554444",
	/** Renewals soft-declined until the retries run out: suspended. */
	renewalsDeclined: "4000000000001018",
	/** The first two tries of each renewal declined, then approved: recovered by a retry. */
	recoversOnRetry: "4000000000001075",
	/** Renewals declined (`card_declined`): recovered by the buyer's card update. */
	merchantChargesDeclined: "4000000000000341",
	/** Each charge disputed 3 days after it, the dispute lost 12 days after it. */
	lostDispute: "4000000000002602",
} as const;

/** A card's number or CVC, encrypted to the checkout's key as the SDK does (JWE, RSA-OAEP-256 with A256GCM). */
export async function encryptCard(jwk: JWK, digits: string): Promise<string> {
	const key = await importJWK(jwk, "RSA-OAEP-256");
	return new CompactEncrypt(new TextEncoder().encode(digits))
		.setProtectedHeader({ alg: "RSA-OAEP-256", enc: "A256GCM", kid: jwk.kid })
		.encrypt(key);
}

export interface DemoHistoryTarget {
	/** The gateway, e.g. http://localhost:3000. */
	url: string;
	adminToken: string;
	accountId: number;
	apiToken: string;
	/** The demo's products, by billing: CHARGE (monthly), PREAUTHORIZE and SCHEDULE (trials); and the metered one (usage prices). */
	products: { id: number; billing: string; usagePrices?: unknown[] }[];
}

export interface DemoHistoryReport {
	checkouts: number;
	/** The test clock's last day, ahead of now. */
	clockDays: number;
	ms: number;
}

const DAY_MS = 86_400_000;

/** MMYY of the card month (UTC, as cards expire: shared/card-expiry.ts) a minute from `now`. */
function expiringThisMonth(now: number): string {
	const at = new Date(now + 60_000);
	return `${String(at.getUTCMonth() + 1).padStart(2, "0")}${String(at.getUTCFullYear() % 100).padStart(2, "0")}`;
}
const DOMAIN = "localhost";

function client(target: DemoHistoryTarget) {
	async function send(method: string, path: string, token: string | null, body?: object, headers: Record<string, string> = {}) {
		const res = await fetch(`${target.url}${path}`, {
			method,
			headers: {
				...(token ? { Authorization: `Bearer ${token}` } : {}),
				...(body ? { "Content-Type": "application/json" } : {}),
				...headers,
			},
			body: body ? JSON.stringify(body) : undefined,
		});
		const text = await res.text();
		if (!res.ok) throw new Error(`Demo history: ${method} ${path.split("?")[0]} answered ${res.status} ${text.slice(0, 200)}`);
		return text;
	}
	return {
		api: (method: string, path: string, body?: object, headers?: Record<string, string>) =>
			send(method, path, target.apiToken, body, headers),
		buyer: (path: string, body: object) => send("POST", path, null, body),
		admin: (path: string, body: object) => send("POST", `/admin${path}`, target.adminToken, body),
		key: async () => JSON.parse(await send("GET", "/api/checkout/key", null)) as JWK,
	};
}

/** Makes the history; throws if the service refuses a step (a demo that cannot be made is said at start, not hidden). */
export async function makeDemoHistory(target: DemoHistoryTarget): Promise<DemoHistoryReport> {
	const started = Date.now();
	const http = client(target);
	const jwk = await http.key();
	const product = (billing: string) => target.products.find(p => p.billing === billing)!.id;
	const monthly = product("CHARGE");
	const held = product("PREAUTHORIZE");
	const free = product("SCHEDULE");
	let buyers = 0;
	let clockDays = 0;
	const json = <T>(text: string) => JSON.parse(text) as T;

	const card = async (digits: string, cardExpiry = "1240") => ({
		encryptedCardNumber: await encryptCard(jwk, digits),
		encryptedCvc: await encryptCard(jwk, "123"),
		cardExpiry,
	});
	async function checkout(
		productId: number,
		digits: string = buyers % 3 === 0 ? CARD.mastercard : CARD.visa,
		cardExpiry?: string,
	): Promise<number> {
		const n = ++buyers;
		const sessionId = await http.api("POST", `/api/session?domain=${DOMAIN}`);
		const answer = json<{ code: string; customerId: number }>(
			await http.buyer("/api/checkout", {
				sessionId,
				productId,
				email: `buyer${n}@example.com`,
				name: "Demo",
				lastName: `Buyer ${n}`,
				landingDomain: DOMAIN,
				...(await card(digits, cardExpiry)),
			}),
		);
		if (answer.code !== "OK") throw new Error(`Demo history: a checkout answered ${answer.code}`);
		return answer.customerId;
	}
	// At once: a checkout mostly waits for the database's commits, which concurrent ones share.
	const checkouts = (n: number, productId: number) => Promise.all(Array.from({ length: n }, () => checkout(productId)));
	const clock = async (days: number) => {
		clockDays = days;
		await http.admin(`/accounts/${target.accountId}/clock`, { advanceTo: new Date(started + days * DAY_MS).toISOString() });
	};
	// The metered plan's customers (docs/usage.md): each step, some API calls and a storage reading, dated in the half
	// minute after the account's now (within the 5 minutes ahead an event may be), in batches of at most 1,000 events.
	const meteredProduct = target.products.find(p => (p.usagePrices?.length ?? 0) > 0);
	const metered: number[] = [];
	const use = async (days: number) => {
		// The account's now: the clock's day, or (before it moved) the real time, just after the customers signed up.
		const now = days === 0 ? Date.now() : started + days * DAY_MS;
		const events = metered.flatMap((customerId, i) => [
			...Array.from({ length: 400 * (i + 1) }, (_, k) => ({
				id: `demo-${customerId}-${days}-${k}`,
				customerId,
				meter: "api_calls",
				timestamp: new Date(now + (k % 30) * 1000).toISOString(),
			})),
			{
				id: `demo-${customerId}-${days}-gb`,
				customerId,
				meter: "storage_gb",
				timestamp: new Date(now).toISOString(),
				properties: { gb: 2 + i + days / 10 },
			},
		]);
		for (let i = 0; i < events.length; i += 1000) await http.api("POST", "/api/usage", { events: events.slice(i, i + 1000) });
	};
	const change = (id: number, quantity: number, mode: string) =>
		http.api("POST", `/api/customer/${id}/change`, { quantity, mode }, { "Idempotency-Key": `demo-change-${id}-${quantity}` });

	// The first day: subscribers, trials, and the cards whose renewals will decline or whose charge will be disputed.
	const [[first, second, third, fourth, fifth], , , , , updatesCard] = await Promise.all([
		checkouts(8, monthly),
		checkouts(2, held),
		checkouts(3, free),
		checkout(monthly, CARD.renewalsDeclined),
		checkout(monthly, CARD.recoversOnRetry),
		checkout(monthly, CARD.merchantChargesDeclined),
		checkout(monthly, CARD.lostDispute),
		// Valid through this month: its first renewal falls after it, so the buyer is warned (CARD_EXPIRING) at once.
		checkout(monthly, CARD.visa, expiringThisMonth(started)),
	]);
	if (meteredProduct) metered.push(...(await checkouts(3, meteredProduct.id)));
	await use(0);
	await change(first, 3, "now_prorated");
	const [charge] = json<{ data: { id: number }[] }>(await http.api("GET", `/api/customer/${second}/transactions`)).data;
	await http.api("GET", `/api/refund/${charge.id}?amountToRefund=4.99`, undefined, { "Idempotency-Key": `demo-refund-${charge.id}` });
	// The held trials are captured and the dispute opens; then the free trials are charged and the dispute is lost.
	await clock(8);
	await use(8);
	await checkouts(3, monthly);
	await clock(18);
	await use(18);
	await Promise.all([
		http.api("POST", `/api/customer/${third}/pause`, {}),
		http.api("POST", `/api/unsubscribe/${fourth}`, {}),
		// Made at the account's now (the clock's day 18): prorated over what is left of the first period.
		change(first, 2, "now_prorated"),
		checkouts(2, held),
	]);
	// The first renewals: one card recovers on its second retry, one is suspended, one recovers by a card update.
	await clock(32);
	await use(32);
	await checkouts(3, monthly);
	const updateSession = await http.api("POST", `/api/session?domain=${DOMAIN}&customerId=${updatesCard}`);
	await http.buyer("/api/card-update", { sessionId: updateSession, landingDomain: DOMAIN, ...(await card(CARD.visa)) });
	await clock(40);
	await use(40);
	await Promise.all([http.api("POST", `/api/customer/${third}/resume`, {}), checkouts(2, free)]);
	// The second and third renewals, a few more buyers, one more leaves.
	await clock(52);
	await use(52);
	await checkouts(3, monthly);
	await clock(64);
	await use(64);
	await Promise.all([http.api("POST", `/api/unsubscribe/${fifth}`, {}), checkouts(2, monthly)]);
	await clock(94);
	await use(94);
	await checkouts(1, monthly);
	return { checkouts: buyers, clockDays, ms: Date.now() - started };
}
