// postinstall: build the pinned NATS server (with JetStream) from its official Go module
// into .nats-server/, with the machine's Go, through the Go module proxy. The tests,
// `npm run cluster` and the benchmark run it (dev/nats-server.ts finds it).
// Best effort only: it must never fail `npm install`.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const VERSION = "v2.15.2"; // its go.mod asks for Go 1.26
const MODULE = `github.com/nats-io/nats-server/v2@${VERSION}`;
const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const dir = join(repo, ".nats-server");
const binary = join(dir, "nats-server");
const tag = "[nats-server]";
const OR_ANOTHER = "or set NATS_SERVER_BIN to a nats-server binary (2.10 or newer, for JetStream)";

/** `go` from PATH, else where Go's official archive puts it (npm may run us with a shorter PATH). */
function findGo() {
	for (const go of ["go", "/usr/local/go/bin/go"]) {
		const res = spawnSync(go, ["version"], { encoding: "utf8" });
		if (res.status === 0) return { go, version: res.stdout.trim() };
	}
	return null;
}

function installedVersion() {
	if (!existsSync(binary)) return null;
	const res = spawnSync(binary, ["--version"], { encoding: "utf8" });
	return res.status === 0 ? res.stdout.trim().split(" ").pop() : null;
}

try {
	const go = findGo();
	if (process.env.NATS_SERVER_BIN) {
		console.log(`${tag} NATS_SERVER_BIN is set (${process.env.NATS_SERVER_BIN}): nothing to build`);
	} else if (installedVersion() === VERSION) {
		console.log(`${tag} ${VERSION} already built in .nats-server`);
	} else if (!go) {
		console.warn(
			`${tag} Go not found, so the NATS server was not built. To fix: install Go 1.26 or newer and re-run npm install, ${OR_ANOTHER}.`,
		);
	} else {
		console.log(
			`${tag} building ${MODULE} with ${go.version} into .nats-server (about 1 minute with a cold Go cache, seconds with a warm one)`,
		);
		// GOBIN only: the machine's own module and build caches stay in use, so a later install or a second clone builds in seconds.
		// CGO_ENABLED=0, as NATS's releases are built: a static binary, and no C compiler needed.
		const res = spawnSync(go.go, ["install", MODULE], {
			cwd: repo,
			env: { ...process.env, GOBIN: dir, CGO_ENABLED: "0" },
			encoding: "utf8",
		});
		if (res.status === 0 && installedVersion() === VERSION) {
			console.log(`${tag} ${VERSION} installed in .nats-server`);
		} else {
			console.warn(
				`${tag} WARNING: 'go install ${MODULE}' failed; the cluster tests and npm run cluster need it.\n` +
					`${tag} To fix: fix the Go error below and re-run npm install, ${OR_ANOTHER}.\n` +
					`${(res.stdout || "") + (res.stderr || "") || String(res.error ?? "")}`.trim(),
			);
		}
	}
} catch (err) {
	console.warn(`${tag} WARNING: NATS server setup skipped: ${err?.message ?? err}`);
}
// Always succeed: a missing NATS server is reported again, with the fix, when it is needed.
process.exitCode = 0;
