// `npm start`: every service in one process, no transporter, and the
// embedded database unless MONGO_URL is set. Prints where to go next.

import { type DemoHistoryTarget, makeDemoHistory } from "../dev/demo-history";
import { startEmbeddedDb } from "../dev/embedded-db";
import { applyCardSecrets, newAdminToken, readLocalSecrets, writeLocalSecrets } from "../dev/local-secrets";
import { type Mailpit, startMailpit } from "../dev/mailpit";
import { createBroker, OWN_SIGNAL_HANDLING, stopOnSignals } from "../runtime/broker";
import { config, resetConfig } from "../shared/config";

/** Buyers' emails go to an embedded Mailpit, whose web UI shows them, unless SMTP_URL names a server (docs/emails.md). */
async function startEmailServer(): Promise<Mailpit | null> {
	if (process.env.SMTP_URL) return null;
	try {
		const mailpit = await startMailpit();
		process.env.SMTP_URL = mailpit.smtpUrl;
		return mailpit;
	} catch (err) {
		console.log(`Emails: not sent, they wait (${(err as Error).message})`);
		return null;
	}
}

/**
 * Once, with the demo account: months of history on its test clock, so the dashboard's home page has figures. A step
 * the service refuses (a low CHECKOUTS_PER_MINUTE) leaves the history short; the service runs all the same.
 */
async function demoHistory(url: string, demo: Omit<DemoHistoryTarget, "url" | "adminToken">): Promise<string> {
	const history = await makeDemoHistory({ url, adminToken: process.env.ADMIN_TOKEN!, ...demo }).catch((err: Error) => err);
	if (history instanceof Error) return `Demo history: not all made (${history.message})`;
	return `Demo history: ${history.checkouts} checkouts over ${history.clockDays} days of the test clock, made in ${(history.ms / 1000).toFixed(1)} s`;
}

async function main(): Promise<void> {
	delete process.env.TRANSPORTER;
	delete process.env.SERVICES;
	const { dataDir, mongoUrl, demo } = config();
	const secrets = readLocalSecrets(dataDir);

	let stopDb = async () => {};
	if (mongoUrl) {
		console.log("Database: MONGO_URL");
	} else {
		const db = await startEmbeddedDb({ persistent: true, dataDir, log: line => console.log(line) });
		console.log(`Database: embedded ${db.kind} at ${db.url} (${db.reason})`);
		process.env.MONGO_URL = `${db.url}/payments`;
		stopDb = db.stop;
	}
	if (!process.env.ADMIN_TOKEN) {
		secrets.adminToken ??= newAdminToken();
		process.env.ADMIN_TOKEN = secrets.adminToken;
	}
	const keys = applyCardSecrets(secrets);
	if (keys.length)
		console.log(`Card keys: ${keys.join(", ")} from ${dataDir}/secrets.json (embedded default; set them in the environment in production)`);
	writeLocalSecrets(dataDir, secrets);
	const mailpit = await startEmailServer();
	if (mailpit) {
		const stopStore = stopDb;
		stopDb = async () => void (await Promise.all([mailpit.stop(), stopStore()]));
	}
	resetConfig();

	const broker = createBroker(config().services, OWN_SIGNAL_HANDLING);
	stopOnSignals(broker, stopDb);
	await broker.start();

	const created = demo ? await broker.call<Omit<DemoHistoryTarget, "url" | "adminToken"> | null>("accounts.seedDemo") : null;
	if (created) {
		secrets.demoAccountId = created.accountId;
		secrets.demoApiToken = created.apiToken;
		const user = await broker.call<{ email: string; password: string }, object>("dashboard.createUser", {
			accountId: created.accountId,
			email: "demo@example.com",
			role: "operator",
		});
		secrets.demoDashboardEmail = user.email;
		secrets.demoDashboardPassword = user.password;
	}
	writeLocalSecrets(dataDir, secrets);

	const server = (broker.getLocalService("gateway") as unknown as { server: import("node:http").Server }).server;
	const url = `http://localhost:${(server.address() as import("node:net").AddressInfo).port}`;
	if (created) console.log(await demoHistory(url, created));
	console.log(`\nPayment service running at ${url}`);
	console.log(`Admin token (ADMIN_TOKEN): ${process.env.ADMIN_TOKEN}`);
	if (demo && secrets.demoApiToken) {
		console.log(`Demo account ${secrets.demoAccountId} (sandbox) API token: ${secrets.demoApiToken}`);
		console.log(`Try: curl -X POST -H "Authorization: Bearer ${secrets.demoApiToken}" "${url}/api/session?domain=localhost"`);
	}
	if (demo && secrets.demoDashboardPassword) {
		console.log(`Dashboard: ${url}/dashboard/ (sign in as ${secrets.demoDashboardEmail}, password ${secrets.demoDashboardPassword})`);
	}
	console.log(
		mailpit ? `Emails to buyers (Mailpit): ${mailpit.httpUrl}/` : `Emails to buyers: ${process.env.SMTP_URL ? "SMTP_URL" : "not sent"}`,
	);
	console.log(`Health: ${url}/actuator/health   API reference: ${url}/api/openapi.json\n`);
}

main().catch(err => {
	console.error(err instanceof Error ? err.message : err);
	process.exit(1);
});
