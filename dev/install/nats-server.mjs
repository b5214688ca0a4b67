// postinstall: build the pinned NATS server (with JetStream) from its official Go module
// into .nats-server/, with the machine's Go, through the Go module proxy. The tests,
// `npm run cluster` and the benchmark run it (dev/nats-server.ts finds it).
// Best effort only: it must never fail `npm install`.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { installGoTool, repo } from "./go-tool.mjs";

const binary = join(repo, ".nats-server", "nats-server");

installGoTool({
	tag: "[nats-server]",
	what: "the NATS server",
	module: "github.com/nats-io/nats-server/v2",
	version: "v2.15.2", // its go.mod asks for Go 1.26
	folder: ".nats-server",
	goVersion: "1.26",
	envVar: "NATS_SERVER_BIN",
	orAnother: "or set NATS_SERVER_BIN to a nats-server binary (2.10 or newer, for JetStream)",
	neededBy: "the cluster tests and npm run cluster need it",
	duration: "about 1 minute with a cold Go cache, seconds with a warm one",
	installedVersion() {
		if (!existsSync(binary)) return null;
		const res = spawnSync(binary, ["--version"], { encoding: "utf8" });
		return res.status === 0 ? res.stdout.trim().split(" ").pop() : null;
	},
});
