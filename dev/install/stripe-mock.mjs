// postinstall: build the pinned stripe-mock (Stripe's official mock of its API) from its
// Go module into .stripe-mock/, with the machine's Go, through the Go module proxy. The
// tests run it (dev/stripe-servers.ts finds it).
// Best effort only: it must never fail `npm install`.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const VERSION = "v0.203.0"; // its go.mod asks for Go 1.22
const MODULE = `github.com/stripe/stripe-mock@${VERSION}`;
const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const dir = join(repo, ".stripe-mock");
const binary = join(dir, "stripe-mock");
const tag = "[stripe-mock]";
const OR_ANOTHER = "or set STRIPE_MOCK_BIN to a stripe-mock binary";

/** `go` from PATH, else where Go's official archive puts it (npm may run us with a shorter PATH). */
function findGo() {
	for (const go of ["go", "/usr/local/go/bin/go"]) {
		const res = spawnSync(go, ["version"], { encoding: "utf8" });
		if (res.status === 0) return { go, version: res.stdout.trim() };
	}
	return null;
}

/** The module version Go wrote into the binary: `stripe-mock -version` says only "master" when built with go install. */
function installedVersion() {
	if (!existsSync(binary)) return null;
	const bytes = readFileSync(binary);
	const line = "\nmod\tgithub.com/stripe/stripe-mock\t";
	const at = bytes.indexOf(line);
	return at < 0 ? null : bytes.subarray(at + line.length, bytes.indexOf("\t", at + line.length)).toString();
}

try {
	const go = findGo();
	if (process.env.STRIPE_MOCK_BIN) {
		console.log(`${tag} STRIPE_MOCK_BIN is set (${process.env.STRIPE_MOCK_BIN}): nothing to build`);
	} else if (installedVersion() === VERSION) {
		console.log(`${tag} ${VERSION} already built in .stripe-mock`);
	} else if (!go) {
		console.warn(
			`${tag} Go not found, so stripe-mock was not built. To fix: install Go 1.22 or newer and re-run npm install, ${OR_ANOTHER}.`,
		);
	} else {
		console.log(
			`${tag} building ${MODULE} with ${go.version} into .stripe-mock (up to 1 minute with a cold Go cache, 2 s with a warm one)`,
		);
		// As for NATS: the machine's own Go caches, and a static binary without a C compiler.
		const res = spawnSync(go.go, ["install", MODULE], {
			cwd: repo,
			env: { ...process.env, GOBIN: dir, CGO_ENABLED: "0" },
			encoding: "utf8",
		});
		if (res.status === 0 && installedVersion() === VERSION) {
			console.log(`${tag} ${VERSION} installed in .stripe-mock`);
		} else {
			console.warn(
				`${tag} WARNING: 'go install ${MODULE}' failed; the Stripe tests need it.\n` +
					`${tag} To fix: fix the Go error below and re-run npm install, ${OR_ANOTHER}.\n` +
					`${(res.stdout || "") + (res.stderr || "") || String(res.error ?? "")}`.trim(),
			);
		}
	}
} catch (err) {
	console.warn(`${tag} WARNING: stripe-mock setup skipped: ${err?.message ?? err}`);
}
// Always succeed: a missing stripe-mock is reported again, with the fix, when a test needs it.
process.exitCode = 0;
