// Shared by the browser tests: Debian's Chromium driven by playwright-core,
// and a small static server that serves what the gateway serves statically
// (public/ at the root, jose's browser build at /vendor/jose/), for tests
// that need the browser code without the whole service.
import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { type Browser, chromium } from "playwright-core";

export const PROJECT_ROOT = path.resolve(__dirname, "../..");
const CHROMIUM = "/usr/bin/chromium";

export async function launchChromium(): Promise<Browser> {
	if (!existsSync(CHROMIUM)) {
		throw new Error(`The browser tests need Debian's Chromium at ${CHROMIUM}: apt-get install chromium`);
	}
	return chromium.launch({
		executablePath: CHROMIUM,
		args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
	});
}

const MOUNTS: [prefix: string, dir: string][] = [
	["/vendor/jose/", path.join(PROJECT_ROOT, "node_modules/jose/dist/browser")],
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

/** Serves public/ and /vendor/jose/ on 127.0.0.1 at a free port; `extra` answers paths of the test's own first. */
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
