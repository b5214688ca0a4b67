// postinstall's Go tools (the NATS server, stripe-mock): `go install` of a pinned module
// into a folder of the project, with the machine's Go, through the Go module proxy.
// Best effort only: it must never fail `npm install`.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The module version Go wrote into a binary it built (its build info), or null: some tools print only "master" or nothing. */
export function builtModuleVersion(binary, module) {
	if (!existsSync(binary)) return null;
	const bytes = readFileSync(binary);
	const line = `\nmod\t${module}\t`;
	const at = bytes.indexOf(line);
	return at < 0 ? null : bytes.subarray(at + line.length, bytes.indexOf("\t", at + line.length)).toString();
}

/** `go` from PATH, else where Go's official archive puts it (npm may run us with a shorter PATH). */
function findGo() {
	for (const go of ["go", "/usr/local/go/bin/go"]) {
		const res = spawnSync(go, ["version"], { encoding: "utf8" });
		if (res.status === 0) return { go, version: res.stdout.trim() };
	}
	return null;
}

/**
 * Builds `${module}@${version}` into `folder` unless `envVar` is set or `installedVersion()`
 * already answers `version`; otherwise says why not and how to fix it.
 * @param {{ tag: string, what: string, module: string, version: string, folder: string, goVersion: string,
 *   envVar: string, orAnother: string, neededBy: string, duration: string, installedVersion: () => string | null,
 *   alsoKeep?: (go: string, target: string) => void }} tool
 *   alsoKeep: runs once the pinned version is in `folder`, to copy more of the module there.
 */
export function installGoTool(tool) {
	const { tag, what, version, folder, goVersion, envVar, orAnother } = tool;
	try {
		const go = findGo();
		if (process.env[envVar]) {
			console.log(`${tag} ${envVar} is set (${process.env[envVar]}): nothing to build`);
		} else if (tool.installedVersion() === version) {
			console.log(`${tag} ${version} already built in ${folder}`);
			if (go) tool.alsoKeep?.(go.go, `${tool.module}@${version}`);
		} else if (!go) {
			console.warn(
				`${tag} Go not found, so ${what} was not built. To fix: install Go ${goVersion} or newer and re-run npm install, ${orAnother}.`,
			);
		} else {
			buildGoTool(tool, go);
		}
	} catch (err) {
		console.warn(`${tag} WARNING: ${what} setup skipped: ${err?.message ?? err}`);
	}
	// Always succeed: a missing tool is reported again, with the fix, when it is needed.
	process.exitCode = 0;
}

/** `go install` of the pinned version into the tool's folder; says how it went. */
function buildGoTool(tool, go) {
	const { tag, version, folder, orAnother, neededBy, duration } = tool;
	const target = `${tool.module}@${version}`;
	console.log(`${tag} building ${target} with ${go.version} into ${folder} (${duration})`);
	// GOBIN only: the machine's own module and build caches stay in use, so a later install or a second clone builds in seconds.
	// CGO_ENABLED=0, as NATS's releases are built: a static binary, and no C compiler needed.
	const res = spawnSync(go.go, ["install", target], {
		cwd: repo,
		env: { ...process.env, GOBIN: join(repo, folder), CGO_ENABLED: "0" },
		encoding: "utf8",
	});
	if (res.status === 0 && tool.installedVersion() === version) {
		console.log(`${tag} ${version} installed in ${folder}`);
		tool.alsoKeep?.(go.go, target);
	} else {
		console.warn(
			`${tag} WARNING: 'go install ${target}' failed; ${neededBy}.\n` +
				`${tag} To fix: fix the Go error below and re-run npm install, ${orAnother}.\n` +
				`${(res.stdout || "") + (res.stderr || "") || String(res.error ?? "")}`.trim(),
		);
	}
}
