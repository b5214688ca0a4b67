// postinstall: unpack the headless Chromium that the @sparticuz/chromium devDependency ships
// (brotli-compressed inside the npm package) into .chromium/<package version>/, for the
// browser tests (test/browser/browser.ts). Best effort only: it must never fail `npm install`.
//
// Why not the package's default, /tmp/chromium unpacked at first launch: that path carries no
// version (a stale unpack of another version would be used), and two test workers launching at
// once would race to unpack it.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const pkg = join(repo, "node_modules", "@sparticuz", "chromium", "package.json");
const root = join(repo, ".chromium");
const tag = "[chromium]";

try {
	if (process.env.CHROMIUM_PATH) {
		console.log(`${tag} CHROMIUM_PATH is set (${process.env.CHROMIUM_PATH}): nothing to unpack`);
	} else if (!existsSync(pkg)) {
		console.log(`${tag} @sparticuz/chromium is not installed (a devDependency, for the browser tests only): nothing to unpack`);
	} else {
		const { version } = JSON.parse(readFileSync(pkg, "utf8"));
		const dir = join(root, version);
		if (existsSync(join(dir, "chromium"))) {
			console.log(`${tag} ${version} already unpacked in .chromium/${version}`);
		} else {
			mkdirSync(root, { recursive: true });
			// The package unpacks into os.tmpdir(): point that at a staging folder, then move it in place whole.
			const staging = mkdtempSync(join(root, `${version}.unpacking-`));
			const unpack = `const { default: chromium } = await import("@sparticuz/chromium"); await chromium.executablePath();`;
			const res = spawnSync(process.execPath, ["--input-type=module", "-e", unpack], {
				cwd: repo,
				env: { ...process.env, TMPDIR: staging },
				encoding: "utf8",
			});
			if (res.status === 0 && existsSync(join(staging, "chromium"))) {
				renameSync(staging, dir);
				console.log(`${tag} ${version} unpacked in .chromium/${version}`);
			} else {
				rmSync(staging, { recursive: true, force: true });
				console.warn(
					`${tag} WARNING: unpacking @sparticuz/chromium ${version} failed; the browser tests need it.\n` +
						`${tag} To fix: re-run npm install, or set CHROMIUM_PATH to a Chromium binary.\n` +
						`${(res.stdout || "") + (res.stderr || "") || String(res.error ?? "")}`.trim(),
				);
			}
		}
		// Older versions' unpacks are 200 MB each and nothing uses them any more.
		for (const old of readdirSync(root)) if (old !== version) rmSync(join(root, old), { recursive: true, force: true });
	}
} catch (err) {
	console.warn(`${tag} WARNING: Chromium setup skipped: ${err?.message ?? err}`);
}
// Always succeed: a missing Chromium is reported again, with the fix, when the browser tests need it.
process.exitCode = 0;
