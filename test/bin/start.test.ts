// `npm start` on a fresh data folder, as a newcomer runs it: a real process
// with the embedded database, stopped with SIGTERM and started again.
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import request from "supertest";
import { npmStart, type Started, stopNpmStart as stop } from "../factories/npm-start";

type Month = Record<
	| "mrr"
	| "newSubscribers"
	| "churnedSubscribers"
	| "grossVolume"
	| "refunds"
	| "chargebacks"
	| "renewalsAttempted"
	| "renewalsRecoveredByRetries"
	| "renewalsRecoveredByCardUpdate"
	| "renewalsLost",
	number
>;

/** The demo account's months in euros, from today to its test clock's day, once the relay has counted its last changes. */
async function demoMonths(url: string, apiToken: string): Promise<Month[]> {
	const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
	const read = async () =>
		(
			await request(url)
				.get(`/api/metrics?from=${day(-1)}&to=${day(120)}&granularity=month&currency=EUR`)
				.set("Authorization", `Bearer ${apiToken}`)
		).body.series[0].points as Month[];
	for (let tries = 0; tries < 50; tries++) {
		const months = await read();
		if (months.some(month => month.chargebacks > 0) && months.filter(month => month.mrr > 0).length >= 3) return months;
		await new Promise(r => setTimeout(r, 200));
	}
	return read();
}

/** The subjects of the emails npm start's Mailpit received, once they include a receipt, a dunning email and a card expiry warning (60 s at most). */
async function demoEmailSubjects(mailpitUrl: string): Promise<string[]> {
	const read = async () => {
		const res = await fetch(`${mailpitUrl}api/v1/messages?limit=1000`);
		return ((await res.json()) as { messages: { Subject: string }[] }).messages.map(m => m.Subject);
	};
	const kinds = [
		/^Your receipt from Demo Shop \(INV-\d{4}-\d{6}\)$/,
		/did not go through|will be suspended|is suspended/,
		/is about to expire/,
	];
	for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise(r => setTimeout(r, 500))) {
		const subjects = await read();
		if (kinds.every(kind => subjects.some(s => kind.test(s)))) return subjects;
	}
	return read();
}

describe("npm start", () => {
	const dataDir = mkdtempSync(path.join(os.tmpdir(), "npm-start-"));
	let first: Started | undefined;
	let second: Started | undefined;
	afterAll(async () => {
		for (const s of [first, second]) if (s) await stop(s);
	});

	test("When started on an empty data folder, then it serves, prints working tokens and a curl, makes the demo account's months of history with its buyers' emails in Mailpit, and keeps its data across a restart", async () => {
		// Act
		first = await npmStart(dataDir);

		// Assert: what it printed works.
		const out = first.output();
		expect(out).toMatch(/Database: embedded (mongod|mongo-java-server)/);
		const apiToken = /API token: (sk_test_\S+)/.exec(out)![1];
		const adminToken = /Admin token \(ADMIN_TOKEN\): (\S+)/.exec(out)![1];
		expect(out).toContain(`curl -X POST -H "Authorization: Bearer ${apiToken}"`);
		expect((await request(first.url).get("/actuator/health")).body.status).toBe("UP");
		const session = await request(first.url).post("/api/session?domain=localhost").set("Authorization", `Bearer ${apiToken}`);
		expect(session.status).toBe(200);
		const products = await request(first.url).get("/admin/accounts/1/products").set("Authorization", `Bearer ${adminToken}`);
		expect(products.body.map((p: { billing: string }) => p.billing).sort()).toEqual(["CHARGE", "CHARGE", "PREAUTHORIZE", "SCHEDULE"]);
		expect(statSync(path.join(dataDir, "secrets.json")).mode & 0o777).toBe(0o600);
		const [, dashboardUrl, demoEmail, demoPassword] = /Dashboard: (\S+) \(sign in as (\S+), password (\S+)\)/.exec(out)!;
		expect(dashboardUrl).toBe(`${first.url}/dashboard/`);
		const signIn = await request(first.url)
			.post("/dashboard/api/sign-in")
			.set("Origin", first.url)
			.send({ email: demoEmail, password: demoPassword });
		expect(signIn.status).toBe(200);
		expect(signIn.body.user).toMatchObject({ accountId: 1, role: "operator" });

		// Assert: the demo account has months of history on its test clock, as its home page shows them.
		expect(out).toMatch(/Demo history: \d+ checkouts over \d+ days of the test clock/);
		const months = await demoMonths(first.url, apiToken);
		expect(months.filter(month => month.mrr > 0).length).toBeGreaterThanOrEqual(3);
		const sum = (figure: keyof (typeof months)[number]) => months.reduce((total, month) => total + month[figure], 0);
		for (const figure of ["newSubscribers", "churnedSubscribers", "grossVolume", "refunds", "chargebacks", "renewalsAttempted"] as const)
			expect([figure, sum(figure) > 0]).toEqual([figure, true]);
		expect(sum("renewalsRecoveredByRetries") + sum("renewalsRecoveredByCardUpdate")).toBeGreaterThan(0);
		expect(sum("renewalsLost")).toBeGreaterThan(0);
		// Assert: the metered plan's usage, billed in arrears on its renewals' invoices (docs/usage.md).
		const meters = await request(first.url).get("/admin/accounts/1/meters").set("Authorization", `Bearer ${adminToken}`);
		expect(meters.body.map((m: { code: string }) => m.code)).toEqual(["api_calls", "storage_gb"]);
		const invoices = (await request(first.url).get("/api/invoices?limit=100").set("Authorization", `Bearer ${apiToken}`)).body.data;
		const usageLines = invoices.flatMap((i: { lines: { kind: string; gross: number }[] }) => i.lines.filter(l => l.kind === "usage"));
		expect(usageLines.filter((l: { gross: number }) => l.gross > 0).length).toBeGreaterThan(0);

		// Assert: the demo's buyers' emails are in Mailpit, whose address it printed: receipts, dunning, a card expiry warning.
		const mailpitUrl = /Emails to buyers \(Mailpit\): (\S+)/.exec(out)![1];
		const subjects = await demoEmailSubjects(mailpitUrl);
		const count = (kind: RegExp) => subjects.filter(s => kind.test(s)).length;
		expect(count(/^Your receipt from Demo Shop \(INV-\d{4}-\d{6}\)$/)).toBeGreaterThanOrEqual(30);
		expect(count(/did not go through|will be suspended|is suspended/)).toBeGreaterThan(0);
		expect(count(/^Your card for Monthly plan \(charged now\) is about to expire$/)).toBe(1);

		// Act: SIGTERM, then start again on the same folder.
		expect(await stop(first)).toBe(0);
		first = undefined;
		second = await npmStart(dataDir);

		// Assert: same tokens, same data, no second demo account.
		const again = await request(second.url).get(`/api/session?sessionId=${session.text}`).set("Authorization", `Bearer ${apiToken}`);
		expect(again.body.sessionId).toBe(session.text);
		const accounts = await request(second.url).get("/admin/accounts").set("Authorization", `Bearer ${adminToken}`);
		expect(accounts.body).toHaveLength(1);
		expect(JSON.parse(readFileSync(path.join(dataDir, "secrets.json"), "utf8")).adminToken).toBe(adminToken);
	}, 120_000);
});
