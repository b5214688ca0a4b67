// The customer portal from a test: the account's settings, a link made by the merchant's API, and a buyer's session
// opened from it, whose requests carry the cookie, and whose changes the Origin and CSRF token the page sends.
import type { PortalSettings } from "../../shared/contracts/accounts";
import type { TestApp } from "../setup/app";
import { admin, bearer, type TestMerchant } from "./merchant";

export async function portalSettings(app: TestApp, merchant: TestMerchant, settings: Partial<PortalSettings>): Promise<void> {
	await admin(app).patch(`/accounts/${merchant.accountId}`, { portal: settings }).expect(200);
}

/** POST /api/customer/{id}/portal-session: the link's URL. */
export async function portalLink(app: TestApp, merchant: TestMerchant, customerId: number, body: object = {}): Promise<string> {
	const res = await app.http().post(`/api/customer/${customerId}/portal-session`).set(bearer(merchant)).send(body).expect(200);
	return res.body.url as string;
}

export const tokenOf = (url: string) => url.slice(url.indexOf("#") + 1);

export interface BuyerSession {
	csrfToken: string;
	get(path: string): ReturnType<ReturnType<TestApp["http"]>["get"]>;
	send(method: "post" | "delete", path: string, body?: object): ReturnType<ReturnType<TestApp["http"]>["post"]>;
}

/** Opens the link as the page does, and reads the CSRF token the page gets. */
export async function openPortal(app: TestApp, url: string): Promise<BuyerSession> {
	const opened = await app
		.http()
		.post("/portal/api/open")
		.set("Origin", app.url)
		.send({ token: tokenOf(url) })
		.expect(200);
	const cookie = String(opened.headers["set-cookie"]).split(";")[0];
	const me = await app.http().get("/portal/api/me").set("Cookie", cookie).expect(200);
	const csrfToken = me.body.csrfToken as string;
	return {
		csrfToken,
		get: path => app.http().get(`/portal/api${path}`).set("Cookie", cookie),
		send: (method, path, body) => {
			const request = app.http()[method](`/portal/api${path}`).set({ Cookie: cookie, Origin: app.url, "X-CSRF-Token": csrfToken });
			return body === undefined ? request : request.send(body);
		},
	};
}
