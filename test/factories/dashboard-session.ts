// A dashboard user of a shop, signed in: its requests carry the session
// cookie, and its changes the Origin and CSRF token the dashboard sends.
import { randomBytes } from "node:crypto";
import type { TestApp } from "../setup/app";
import { admin, type TestMerchant } from "./merchant";

const PASSWORD = "correct horse battery staple";

export interface DashboardSession {
	get(path: string): ReturnType<ReturnType<TestApp["http"]>["get"]>;
	send(method: "post" | "patch" | "delete", path: string, body?: object): ReturnType<ReturnType<TestApp["http"]>["post"]>;
}

export async function signedIn(app: TestApp, merchant: TestMerchant, role: "viewer" | "operator"): Promise<DashboardSession> {
	const email = `person-${randomBytes(4).toString("hex")}@shop.example.com`;
	await admin(app).post(`/accounts/${merchant.accountId}/dashboard-users`, { email, role, password: PASSWORD }).expect(201);
	const res = await app.http().post("/dashboard/api/sign-in").set("Origin", app.url).send({ email, password: PASSWORD }).expect(200);
	const cookie = String(res.headers["set-cookie"]).split(";")[0];
	return {
		get: path => app.http().get(`/dashboard/api${path}`).set("Cookie", cookie),
		send: (method, path, body = {}) =>
			app.http()[method](`/dashboard/api${path}`).set({ Cookie: cookie, Origin: app.url, "X-CSRF-Token": res.body.csrfToken }).send(body),
	};
}
