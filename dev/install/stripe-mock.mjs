// postinstall: build the pinned stripe-mock (Stripe's official mock of its API) from its
// Go module into .stripe-mock/, with the machine's Go, through the Go module proxy. The
// tests run it (dev/stripe-servers.ts finds it).
// Best effort only: it must never fail `npm install`.
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { builtModuleVersion, installGoTool, repo } from "./go-tool.mjs";

const binary = join(repo, ".stripe-mock", "stripe-mock");

installGoTool({
	tag: "[stripe-mock]",
	what: "stripe-mock",
	module: "github.com/stripe/stripe-mock",
	version: "v0.203.0", // its go.mod asks for Go 1.22
	folder: ".stripe-mock",
	goVersion: "1.22",
	envVar: "STRIPE_MOCK_BIN",
	orAnother: "or set STRIPE_MOCK_BIN to a stripe-mock binary",
	neededBy: "the Stripe tests need it",
	duration: "up to 1 minute with a cold Go cache, 2 s with a warm one",
	/** The module version Go wrote into the binary: `stripe-mock -version` says only "master" when built with go install. */
	installedVersion: () => builtModuleVersion(binary, "github.com/stripe/stripe-mock"),
	/** Its bundled fixtures, next to it: the flow tests start it with them, the intents' status set (dev/stripe-servers.ts). */
	alsoKeep(go, target) {
		const res = spawnSync(go, ["mod", "download", "-json", target], { cwd: repo, encoding: "utf8" });
		const dir = res.status === 0 ? JSON.parse(res.stdout).Dir : null;
		if (!dir)
			return console.warn(
				`[stripe-mock] WARNING: 'go mod download ${target}' failed; the stripe-mock flow tests need its fixtures.\n${res.stderr}`,
			);
		// Written anew: the module cache's files are read-only, and a copy would be too.
		const fixtures = join(repo, ".stripe-mock", "fixtures3.json");
		rmSync(fixtures, { force: true });
		writeFileSync(fixtures, readFileSync(join(dir, "embedded", "openapi", "fixtures3.json")));
	},
});
