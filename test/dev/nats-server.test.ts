import { spawnSync } from "node:child_process";
import path from "node:path";
import { natsServerBin } from "../../dev/nats-server";
import { projectRoot } from "../../shared/paths";

describe("natsServerBin", () => {
	test("When NATS_SERVER_BIN is not set, then it is the server npm install built in .nats-server, never one from PATH", () => {
		const bin = natsServerBin({});

		expect(bin).toBe(path.join(projectRoot, ".nats-server", "nats-server"));
		expect(spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout).toMatch(/^nats-server: v2\.\d+\.\d+/);
	});

	test("When NATS_SERVER_BIN names a file, then that file is used", () => {
		expect(natsServerBin({ NATS_SERVER_BIN: process.execPath })).toBe(process.execPath);
	});

	test("When NATS_SERVER_BIN names nothing, then the error says so", () => {
		expect(() => natsServerBin({ NATS_SERVER_BIN: "/nowhere/nats-server" })).toThrow(
			"NATS_SERVER_BIN is /nowhere/nats-server, which does not exist",
		);
	});
});
