// A MID's monthly cap with two checkout nodes, each a process of its own
// (`npm run node` with SERVICES=checkout) over a real NATS server: how far a
// burst of concurrent checkouts can take the MID past its cap, and that once
// both nodes have seen billing's count the capped MID receives nothing more
// (services/checkout/mid-routing.ts, docs/disputes.md#routing).
import { type ChildProcess, spawn } from "node:child_process";
import { projectRoot } from "../../shared/paths";
import { createShop, type Shop, submitCheckout, uniqueEmail } from "../factories/checkout";
import { admin, bearer } from "../factories/merchant";
import { startApp, type TestApp } from "../setup/app";
import { type NatsServer, startNats } from "../setup/nats";

const CHECKOUT_NODES = ["checkout-1", "checkout-2"];
/** Room for this many sales of 9.99 on the capped MID. */
const ROOM = 10;
const BURST = 120;

let nats: NatsServer;
let app: TestApp;
const children: ChildProcess[] = [];

beforeAll(async () => {
	nats = await startNats();
	app = await startApp({ env: { TRANSPORTER: nats.url }, services: ["gateway", "accounts", "sessions", "payments", "billing"] });
	for (const nodeId of CHECKOUT_NODES) {
		// One real process per node (tsx as a loader, not its CLI, which would run the node in a child).
		const child = spawn(process.execPath, ["--import", "tsx", "bin/node.ts"], {
			cwd: projectRoot,
			env: { ...process.env, SERVICES: "checkout", NODE_ID: nodeId, LOG_LEVEL: "warn" },
			stdio: ["ignore", "ignore", "inherit"],
		});
		children.push(child);
	}
	const deadline = Date.now() + 60_000;
	for (;;) {
		const services = app.broker.registry.getServiceList({ onlyAvailable: true, withActions: false }) as { name: string; nodeID: string }[];
		const nodes = new Set(services.filter(s => s.name === "checkout").map(s => s.nodeID));
		if (CHECKOUT_NODES.every(n => nodes.has(n))) break;
		if (Date.now() > deadline) throw new Error(`checkout nodes did not join: ${[...nodes].join(", ")}`);
		await new Promise(r => setTimeout(r, 200));
	}
}, 90_000);

afterAll(async () => {
	for (const child of children) child.kill("SIGTERM");
	await Promise.all(children.map(c => (c.exitCode !== null ? null : new Promise(r => c.once("exit", r)))));
	await app?.stop();
	await nats?.stop();
});

/** Checkouts `concurrency` at a time; answers the MID of each approved one. */
async function checkouts(shop: Shop, count: number, concurrency: number): Promise<number[]> {
	const mids: number[] = [];
	let next = 0;
	await Promise.all(
		Array.from({ length: concurrency }, async () => {
			while (next < count) {
				next++;
				const res = await submitCheckout(app, shop, { productId: shop.products.charge, email: uniqueEmail() });
				if (res.body.code !== "OK") throw new Error(`checkout: ${res.text}`);
				const [tx] = (await app.http().get(`/api/customer/${res.body.customerId}/transactions`).set(bearer(shop))).body.data;
				mids.push(tx.midId);
			}
		}),
	);
	return mids;
}

describe("Monthly caps with two checkout nodes", () => {
	test("When a burst of checkouts meets a capped MID on two nodes, then it passes the cap by at most what the other node sold in one volume refresh, and after that receives nothing more", async () => {
		// Arrange: the first MID weighs 9 of 10 (most checkouts want it) and has room for ROOM sales.
		const shop = await createShop(app);
		const [capped, other] = shop.mids;
		await admin(app)
			.patch(`/accounts/${shop.accountId}/merchant-accounts/${capped}`, { weight: 9, monthlyCap: { amount: ROOM * 9.99, currency: "EUR" } })
			.expect(200);

		// Act: a burst, then (both nodes' counts older than their refresh) more.
		const burst = await checkouts(shop, BURST, 16);
		await new Promise(r => setTimeout(r, 1500));
		const after = await checkouts(shop, 40, 8);

		// Assert
		const onCapped = burst.filter(mid => mid === capped).length;
		const passedBy = Math.max(0, onCapped - ROOM);
		console.log(
			`Cap of ${ROOM} sales, two checkout nodes, ${BURST} checkouts 16 at a time: ${onCapped} on the capped MID (passed by ${passedBy})`,
		);
		// Each node alone never passes it; together, by what one node sold while the other's count was at most 1 s old.
		expect(onCapped).toBeGreaterThanOrEqual(ROOM);
		expect(passedBy).toBeLessThanOrEqual(ROOM);
		expect(burst.filter(mid => mid === other).length).toBe(BURST - onCapped);
		expect(after.filter(mid => mid === capped)).toEqual([]);
	}, 180_000);
});
