// Shared by the browser tests: the Chromium that npm install brings, driven by
// playwright-core, and a small static server that serves what the gateway serves statically
// (public/ at the root, jose's and Chart.js's browser builds under /vendor/), for tests
// that need the browser code without the whole service.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";

export const PROJECT_ROOT = path.resolve(__dirname, "../..");

/**
 * CHROMIUM_PATH when set, otherwise the headless Chromium of the @sparticuz/chromium
 * devDependency, which npm install unpacks into .chromium/<its version>/
 * (dev/install/chromium.mjs). playwright-core is pinned to the release built
 * for that Chromium. Never a system browser, so a green run proves what npm install provides.
 */
function chromiumPath(): string {
	const configured = process.env.CHROMIUM_PATH;
	if (configured) {
		if (!existsSync(configured)) throw new Error(`CHROMIUM_PATH is ${configured}, which does not exist`);
		return configured;
	}
	const pkg = path.join(PROJECT_ROOT, "node_modules/@sparticuz/chromium/package.json");
	const fix = "re-run npm install (with its devDependencies) and read its [chromium] lines, or set CHROMIUM_PATH to a Chromium binary";
	if (!existsSync(pkg)) throw new Error(`The browser tests need the @sparticuz/chromium devDependency: ${fix}`);
	const { version } = JSON.parse(readFileSync(pkg, "utf8")) as { version: string };
	const unpacked = path.join(PROJECT_ROOT, ".chromium", version, "chromium");
	if (!existsSync(unpacked))
		throw new Error(`The browser tests need the Chromium of @sparticuz/chromium ${version} at ${unpacked}: ${fix}`);
	return unpacked;
}

export async function launchChromium(): Promise<Browser> {
	return chromium.launch({
		executablePath: chromiumPath(),
		args: [
			"--no-sandbox",
			"--disable-gpu",
			"--disable-quic",
			"--no-first-run",
			"--disable-background-networking",
			"--disable-component-update",
			"--disable-sync",
		],
	});
}

const MOUNTS: [prefix: string, dir: string][] = [
	["/vendor/jose/", path.join(PROJECT_ROOT, "node_modules/jose/dist/browser")],
	["/vendor/chart.js/", path.join(PROJECT_ROOT, "node_modules/chart.js/dist")],
	["/", path.join(PROJECT_ROOT, "public")],
];

const TYPES: Record<string, string> = {
	".html": "text/html; charset=utf-8",
	".js": "text/javascript; charset=utf-8", // module scripts load only with a JavaScript type
	".css": "text/css; charset=utf-8",
	".json": "application/json",
};

export interface StaticServer {
	url: string;
	close(): Promise<void>;
}

/** Serves public/ and /vendor/ (jose, Chart.js) on 127.0.0.1 at a free port; `extra` answers paths of the test's own first. */
export async function serveStatic(extra: Record<string, { type: string; body: string }> = {}): Promise<StaticServer> {
	const server = http.createServer(async (req, res) => {
		const urlPath = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
		if (extra[urlPath]) {
			res.writeHead(200, { "Content-Type": extra[urlPath].type }).end(extra[urlPath].body);
			return;
		}
		const [prefix, dir] = MOUNTS.find(([p]) => urlPath.startsWith(p))!;
		let file = path.join(dir, urlPath.slice(prefix.length));
		try {
			if (!file.startsWith(dir + path.sep) && file !== dir) throw new Error("outside");
			if ((await stat(file)).isDirectory()) file = path.join(file, "index.html");
			const body = await readFile(file);
			res.writeHead(200, { "Content-Type": TYPES[path.extname(file)] ?? "application/octet-stream" }).end(body);
		} catch {
			res.writeHead(404, { "Content-Type": "text/plain" }).end("not found");
		}
	});
	await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}`,
		close: () => new Promise<void>(resolve => server.close(() => resolve())),
	};
}

/** Where the browser tests keep their screenshots (CI keeps the folder). */
export const SCREENSHOTS = path.join(PROJECT_ROOT, "test-output");

/** Keeps the whole page as test-output/<name>.png. */
export async function keepScreenshot(page: Page, name: string): Promise<void> {
	mkdirSync(SCREENSHOTS, { recursive: true });
	await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** An amount as the dashboard shows it in a browser of the tests' locale (en-US): `shownMoney(9.99, "EUR")` is "€9.99". */
export const shownMoney = (amount: number, currency: string) =>
	new Intl.NumberFormat("en-US", { style: "currency", currency }).format(amount);
