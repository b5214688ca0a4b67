// postinstall: fetch the jars of the embedded MongoDB-compatible server (mongo-java-server)
// into .embedded-db/lib. Best effort only: it must never fail `npm install`.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const lib = join(repo, ".embedded-db", "lib");
const tag = "[embedded-db]";

function hasJars() {
	try {
		return readdirSync(lib).some(f => f.startsWith("mongo-java-server-core-"));
	} catch {
		return false;
	}
}

try {
	if (process.env.MONGO_URL || process.env.SKIP_EMBEDDED_DB === "1") {
		// An external database is configured (or the user opted out): nothing to fetch.
	} else if (hasJars()) {
		console.log(`${tag} mongo-java-server jars already present in .embedded-db/lib`);
	} else if (spawnSync("mvn", ["-v"], { stdio: "ignore" }).status !== 0) {
		console.warn(
			`${tag} Maven not found, so the embedded database (mongo-java-server) was not installed.\n` +
				`${tag} Install it with: apt-get install maven openjdk-17-jre-headless  (then re-run npm install),\n` +
				`${tag} or set MONGO_URL to use an existing MongoDB.`,
		);
	} else {
		const args = [
			"-q",
			"-f",
			join(repo, "dev", "db", "pom.xml"),
			"dependency:copy-dependencies",
			`-DoutputDirectory=${lib}`,
			"-DincludeScope=runtime",
		];
		const res = spawnSync("mvn", args, { cwd: repo, encoding: "utf8" });
		if (res.status === 0 && hasJars()) {
			console.log(`${tag} mongo-java-server jars installed in .embedded-db/lib`);
		} else {
			console.warn(
				`${tag} WARNING: 'mvn ${args.join(" ")}' failed; the embedded database is unavailable.\n` +
					`${tag} Fix the Maven error below and re-run npm install, or set MONGO_URL.\n` +
					`${(res.stdout || "") + (res.stderr || "") || String(res.error ?? "")}`.trim(),
			);
		}
	}
} catch (err) {
	console.warn(`${tag} WARNING: embedded database setup skipped: ${err?.message ?? err}`);
}
// Always succeed: a missing embedded db is reported again, with the fix, when it is needed.
process.exitCode = 0;
