// Builds a merchant's account through the admin API, as an operator would.
import type { TestApp } from "../setup/app";
import { ADMIN_TOKEN } from "../setup/app";

export interface TestMerchant {
	accountId: number;
	apiToken: string;
	webhookSecret: string;
}

export function admin(app: TestApp) {
	const http = app.http();
	const auth = { Authorization: `Bearer ${ADMIN_TOKEN}` };
	return {
		post: (path: string, body?: object) => http.post(`/admin${path}`).set(auth).send(body),
		patch: (path: string, body?: object) => http.patch(`/admin${path}`).set(auth).send(body),
		get: (path: string) => http.get(`/admin${path}`).set(auth),
		delete: (path: string) => http.delete(`/admin${path}`).set(auth),
	};
}

/** A fresh account; throws if the admin API refuses (this is Arrange, not Act). */
export async function createMerchant(app: TestApp, overrides: { name?: string; environment?: string } = {}): Promise<TestMerchant> {
	const res = await admin(app).post("/accounts", { name: "Test shop", environment: "sandbox", ...overrides });
	if (res.status !== 201) throw new Error(`createMerchant: ${res.status} ${res.text}`);
	return { accountId: res.body.id, apiToken: res.body.apiToken, webhookSecret: res.body.webhookSecret };
}

export function bearer(merchant: TestMerchant): Record<string, string> {
	return { Authorization: `Bearer ${merchant.apiToken}` };
}

export const DAY_MS = 86_400_000;

/** Moves a sandbox account's test clock `days` from now (POST /admin/accounts/{id}/clock): what falls due until then runs. */
export function advanceClock(app: TestApp, merchant: Pick<TestMerchant, "accountId">, days: number) {
	return admin(app)
		.post(`/accounts/${merchant.accountId}/clock`, { advanceTo: new Date(Date.now() + days * DAY_MS).toISOString() })
		.expect(200);
}

/** A monthly CHARGE plan in EUR of the account's "default" MID group, with `body`'s fields over those; its id. */
export async function createPlan(app: TestApp, merchant: Pick<TestMerchant, "accountId">, body: object): Promise<number> {
	const res = await admin(app)
		.post(`/accounts/${merchant.accountId}/products`, {
			name: "Plan",
			currency: "EUR",
			merchantAccountGroup: "default",
			billing: "CHARGE",
			renewal: { every: 1, unit: "month" },
			...body,
		})
		.expect(201);
	return res.body.id as number;
}
