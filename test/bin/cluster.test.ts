// `npm run cluster`: the compose topology as local processes, started and
// stopped as a newcomer would (Ctrl-C is SIGINT).
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import request from "supertest";
import { freePort } from "../../dev/net";
import { createBroker } from "../../runtime/broker";
import { projectRoot } from "../../shared/paths";

test("When npm run cluster starts, then every service runs in its own process over NATS, the API works, and Ctrl-C stops it all", async () => {
	// Arrange
	const port = await freePort();
	const env: NodeJS.ProcessEnv = {
		...process.env,
		DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "cluster-")),
		PORT: String(port),
		BILLING_NODES: "2",
		LOG_LEVEL: "warn",
	};
	delete env.MONGO_URL;
	delete env.TRANSPORTER;
	delete env.ADMIN_TOKEN;
	const cluster = spawn(process.execPath, ["--import", "tsx", "bin/cluster.ts"], { cwd: projectRoot, env });
	let output = "";
	cluster.stdout.on("data", chunk => (output += chunk));
	cluster.stderr.on("data", chunk => (output += chunk));
	const exited = new Promise<number | null>(resolve => cluster.once("exit", code => resolve(code)));

	try {
		// Act
		for (let waited = 0; !output.includes("[cluster] operate it") && waited < 120_000; waited += 250) {
			if (cluster.exitCode !== null) throw new Error(`npm run cluster exited early:\n${output}`);
			await new Promise(r => setTimeout(r, 250));
		}
		const url = `http://127.0.0.1:${port}`;
		const health = await request(url).get("/actuator/health");
		const token = /demo account \d+ API token: (\S+)/.exec(output)?.[1];
		const session = await request(url).post("/api/session?domain=localhost").set("Authorization", `Bearer ${token}`);

		// Assert
		expect(health.body).toMatchObject({
			status: "UP",
			components: { transporter: { status: "UP", details: { type: "NatsTransporter" } } },
		});
		expect(session.status).toBe(200);
		// An operator's node joins as `npm run repl` would and sees one node per service and two billing nodes.
		const transporter = /TRANSPORTER=(nats:\/\/\S+)/.exec(output)![1];
		const operator = createBroker([], {
			nodeID: "test-operator",
			logger: false,
			transporter: { type: "NATS", options: { url: transporter } },
		});
		await operator.start();
		try {
			await operator.waitForServices(["billing", "gateway"], 10_000);
			await new Promise(r => setTimeout(r, 500));
			const nodes = (operator.registry.getNodeList({ onlyAvailable: true, withServices: false }) as { id: string }[]).map(n => n.id);
			expect(nodes.filter(id => id !== "test-operator").sort()).toEqual([
				"accounts",
				"billing-1",
				"billing-2",
				"checkout",
				"dashboard",
				"gateway",
				"invoicing-1",
				"metrics",
				"notifications",
				"payments",
				"portal",
				"refunds",
				"sessions",
				"usage-1",
			]);
		} finally {
			await operator.stop();
		}
	} finally {
		cluster.kill("SIGINT");
	}
	expect(await exited).toBe(0);
	expect(output).toContain("[cluster] stopping");
}, 180_000);
