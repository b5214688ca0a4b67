// The production broker settings (moleculer.config.ts) as a node runs them.
import { Errors, ServiceBroker } from "moleculer";
import { freePort } from "../dev/net";
import { brokerOptions } from "../moleculer.config";
import { idempotent } from "../shared/action";
import { resetConfig } from "../shared/config";

afterEach(() => {
	delete process.env.METRICS_PORT;
	resetConfig();
});

function flakyService(calls: Record<string, number>) {
	const failOnce = (name: string) => () => {
		calls[name] = (calls[name] ?? 0) + 1;
		if (calls[name] === 1) throw new Errors.RequestTimeoutError({ action: name, nodeID: "other" });
		return "ok";
	};
	return {
		name: "flaky",
		actions: {
			read: idempotent({ handler: failOnce("read") }),
			charge: { handler: failOnce("charge") },
		},
	};
}

test("When an idempotent action times out, then the broker retries it; a payment action is never retried", async () => {
	const calls: Record<string, number> = {};
	const broker = new ServiceBroker(brokerOptions({ logger: false }));
	broker.createService(flakyService(calls));
	await broker.start();
	try {
		await expect(broker.call("flaky.read")).resolves.toBe("ok");
		await expect(broker.call("flaky.charge")).rejects.toThrow(Errors.RequestTimeoutError);
		expect(calls).toEqual({ read: 2, charge: 1 });
	} finally {
		await broker.stop();
	}
});

test("When METRICS_PORT is set, then the node serves Prometheus metrics of its action calls", async () => {
	const port = await freePort();
	process.env.METRICS_PORT = String(port);
	resetConfig();
	const broker = new ServiceBroker(brokerOptions({ logger: false }));
	broker.createService({ name: "greeter", actions: { hello: () => "hi" } });
	await broker.start();
	try {
		await broker.call("greeter.hello");
		const res = await fetch(`http://127.0.0.1:${port}/metrics`);
		expect(res.status).toBe(200);
		expect(await res.text()).toMatch(/moleculer_request_total\{[^}]*action="greeter.hello"[^}]*\} 1/);
	} finally {
		await broker.stop();
	}
});
