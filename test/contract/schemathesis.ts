// `npm run test:contract`: Schemathesis, an independent property-based API
// tester, judges the service against its own OpenAPI document. This script
// installs the pinned Schemathesis into a git-ignored virtualenv, starts every
// service on a fresh embedded database, makes fixtures the way merchants do
// (admin API, real encrypted checkouts), and runs Schemathesis with every
// check, positive and negative data and the stateful links. The few accepted
// answers are listed, with why, in hooks.py.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import request from "supertest";
import { startEmbeddedDb } from "../../dev/embedded-db";
import { applyCardSecrets } from "../../dev/local-secrets";
import { createBroker } from "../../runtime/broker";
import { ALL_SERVICES, resetConfig } from "../../shared/config";
import { projectRoot } from "../../shared/paths";
import { CARDS, createShop, encrypt, type Shop, submitCheckout } from "../factories/checkout";
import { admin } from "../factories/merchant";
import { ADMIN_TOKEN, type TestApp } from "../setup/app";

const HERE = path.join(projectRoot, "test", "contract");
const VENV = path.join(projectRoot, ".venv-schemathesis");
const SCHEMATHESIS = path.join(VENV, "bin", "schemathesis");
const REQUIREMENTS = path.join(HERE, "requirements.txt");
const PINNED = /^schemathesis==(\S+)$/m.exec(readFileSync(REQUIREMENTS, "utf8"))![1];
/** Encrypted test cards the hooks hand to positive checkouts (a JWE cannot be drawn from a schema). */
const JWE_POOL_SIZE = 20;

function run(command: string, args: string[]): void {
	const result = spawnSync(command, args, { stdio: "inherit" });
	if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${result.error?.message ?? `exit ${result.status}`})`);
}

/** The pinned Schemathesis in .venv-schemathesis, installed from PyPI when missing or another version. */
function ensureSchemathesis(): void {
	const version = existsSync(SCHEMATHESIS) ? spawnSync(SCHEMATHESIS, ["--version"], { encoding: "utf8" }).stdout : "";
	if (version.includes(PINNED)) return;
	console.log(`Installing Schemathesis ${PINNED} into ${VENV}`);
	run("python3", ["-m", "venv", "--clear", VENV]);
	run(path.join(VENV, "bin", "pip"), ["install", "--quiet", "--disable-pip-version-check", "-r", REQUIREMENTS]);
}

/** Takes every webhook, so deliveries reach DELIVERED with an attempt log. */
async function startReceiver(): Promise<{ url: string; close(): void }> {
	const server = http.createServer((req, res) => req.resume().on("end", () => res.writeHead(200).end()));
	await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
	return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, close: () => server.close() };
}

/** An account with MIDs, a product of each kind, paid customers, a blocked BIN and delivered webhooks. */
async function shopWithCustomers(app: TestApp, webhookUrl: string): Promise<{ shop: Shop; customerId: number; transactionId: number }> {
	const shop = await createShop(app);
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl }).expect(200);
	await admin(app).post(`/accounts/${shop.accountId}/bin-blacklist`, { bin: "400000" }).expect(201);
	let customerId = 0;
	for (const productId of Object.values(shop.products)) {
		const checkout = await submitCheckout(app, shop, { productId });
		if (checkout.body.code !== "OK") throw new Error(`Fixture checkout failed: ${checkout.status} ${checkout.text}`);
		customerId = checkout.body.customerId;
	}
	const [transaction] = (await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`).expect(200)).body;
	return { shop, customerId, transactionId: transaction.id };
}

async function main(): Promise<number> {
	ensureSchemathesis();
	const work = mkdtempSync(path.join(os.tmpdir(), "contract-"));
	const db = await startEmbeddedDb({ persistent: false, dataDir: work });
	// The factories' admin token: this service exists only for the run.
	const adminToken = ADMIN_TOKEN;
	applyCardSecrets({});
	Object.assign(process.env, {
		PORT: "0",
		ADMIN_TOKEN: adminToken,
		LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
		MONGO_URL: `${db.url}/contract`,
		// Schemathesis sends thousands of requests, many without a valid token on purpose.
		RATE_LIMIT_PER_SECOND: "1000000",
		AUTH_FAILURES_PER_MINUTE: "1000000",
		CHECKOUTS_PER_MINUTE: "1000000",
	});
	resetConfig();
	const broker = createBroker(ALL_SERVICES);
	const receiver = await startReceiver();
	try {
		await broker.start();
		const server = (broker.getLocalService("gateway") as unknown as { server: http.Server }).server;
		const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
		const app: TestApp = { broker, url, http: () => request(url), stop: () => broker.stop() };

		// The demo page's account, so GET /demo/session has something to answer.
		await broker.call("accounts.seedDemo");
		// /api runs as account A; /admin changes account B, so a token rotation or a product change cannot cut off the run.
		const a = await shopWithCustomers(app, receiver.url);
		const b = await shopWithCustomers(app, receiver.url);
		const [delivery] = (await admin(app).get(`/accounts/${b.shop.accountId}/webhooks`).expect(200)).body;
		const jwes = {
			cards: await Promise.all(Array.from({ length: JWE_POOL_SIZE }, () => encrypt(app, CARDS.visa))),
			cvcs: await Promise.all(Array.from({ length: JWE_POOL_SIZE }, () => encrypt(app, "123"))),
		};
		writeFileSync(path.join(work, "jwes.json"), JSON.stringify(jwes));
		// Dictionaries schemathesis.toml draws valid ids from (libFuzzer's format: one quoted value per line).
		const dictionaries = {
			customer: a.customerId,
			transaction: a.transactionId,
			adminAccount: b.shop.accountId,
			adminProduct: b.shop.products.schedule,
			adminCustomer: b.customerId,
			event: delivery.id,
		};
		const configFile = path.join(work, "schemathesis.toml");
		const values = Object.entries(dictionaries).map(([name, value]) => `${name} = { values = [${JSON.stringify(value)}] }`);
		writeFileSync(configFile, `${readFileSync(path.join(HERE, "schemathesis.toml"), "utf8")}\n[dictionaries]\n${values.join("\n")}\n`);
		console.log(`Service at ${url}; fixtures ${JSON.stringify(dictionaries)}`);

		const code = await new Promise<number>(resolve => {
			const child = spawn(
				SCHEMATHESIS,
				["--config-file", configFile, "run", `${url}/api/openapi.json`, "--url", url, ...process.argv.slice(2)],
				{
					stdio: "inherit",
					env: {
						...process.env,
						CONTRACT_API_TOKEN: a.shop.apiToken,
						CONTRACT_ADMIN_TOKEN: adminToken,
						CONTRACT_JWES: path.join(work, "jwes.json"),
						SCHEMATHESIS_HOOKS: "hooks",
						PYTHONPATH: HERE,
					},
				},
			);
			child.on("exit", status => resolve(status ?? 1));
		});
		return code;
	} finally {
		receiver.close();
		await broker.stop().catch(() => {});
		await db.stop();
		rmSync(work, { recursive: true, force: true });
	}
}

main().then(
	code => process.exit(code),
	err => {
		console.error(err);
		process.exit(1);
	},
);
