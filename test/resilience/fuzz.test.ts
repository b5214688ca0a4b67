// Bad input (issue 7, section 2): 10,000+ generated requests across every
// endpoint, each with a defect the service must refuse. The process must stay
// up, answer no 5xx but the spec's 500 for a bad session domain, keep the
// documented error shapes, and leave every database exactly as it was.
// Seeded and reproducible: FUZZ_SEED=<n> (default below), FUZZ_REQUESTS=<n>.
// Inputs that once broke something are replayed from fuzz-corpus.json.
import { readFileSync } from "node:fs";
import path from "node:path";
import { adminEndpoints, apiEndpoints, demoEndpoints, publicEndpoints } from "../../services/gateway/endpoints";
import { startApp, type TestApp, uniqueDatabaseName } from "../setup/app";
import { answerProblems } from "./support/answers";
import { type DbWatcher, differences, watchDatabases } from "./support/db-snapshot";
import { endpointSpecs, type FuzzRequest, generate, malformedHttp, type World } from "./support/fuzz-requests";
import { createRandom, seedFromEnv } from "./support/prng";
import { createClient, parseRawResponse, type RawResponse, sendRawBytes } from "./support/raw-http";
import { type Built, buildWorld } from "./support/world";

const SEED = seedFromEnv(20261122);
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_000);
/** Of those, sent as malformed HTTP over raw sockets. */
const MALFORMED_SHARE = 0.03;
const CONCURRENCY = 16;
/** The databases are compared after every batch, so a change is pinned to a few hundred requests. */
const BATCH = 500;

const database = uniqueDatabaseName();
let app: TestApp;
let built: Built;
let watcher: DbWatcher;
const errorLogs: string[] = [];

beforeAll(async () => {
	app = await startApp({
		database,
		// Info, not debug: 10,000 refused requests would write a million lines of stack traces.
		logLevel: "info",
		onLog: line => {
			if (/^\S+ (ERROR|FATAL)/.test(line)) errorLogs.push(line);
		},
		// No renewal cycle may start in the middle of the run; the checkout recovery works off the world's
		// checkouts (its listings) 11 s after them, before the run, instead of 2 minutes into it.
		env: { RENEWAL_CRON: "0 0 1 1 *", REFUND_RECOVERY_GRACE_MS: "11000", REFUND_RECOVERY_INTERVAL_MS: "500" },
	});
	built = await buildWorld(app);
	watcher = await watchDatabases(process.env.MONGO_URL!.replace(/\/[^/]*$/, ""), database);
	// A relay still in flight, or a checkout still listed for the recovery, would change the database during the run.
	await watcher.settled(45_000);
}, 90_000);

afterAll(async () => {
	await watcher?.close();
	await built?.receiver.stop();
	await app?.stop();
});

const byRoute = new Map(endpointSpecs().map(spec => [spec.route, spec]));

function tableRoutes(): string[] {
	const prefixed = (prefix: string, table: Record<string, unknown>) =>
		Object.keys(table).map(key => {
			const [method, route] = key.split(" ");
			return `${method} ${prefix}${route}`;
		});
	return [
		...prefixed("/api", apiEndpoints),
		...prefixed("/api", publicEndpoints),
		...prefixed("/admin", adminEndpoints),
		...prefixed("/demo", demoEndpoints),
	];
}

async function send(client: ReturnType<typeof createClient>, req: FuzzRequest): Promise<RawResponse> {
	if (!req.raw) return client.send(req);
	const text = await sendRawBytes(app.url, req.raw);
	const res = parseRawResponse(text);
	if (!res) throw new Error(`the connection closed without an answer${text ? `: ${JSON.stringify(text.slice(0, 100))}` : ""}`);
	return res;
}

function describeRequest(req: FuzzRequest): string {
	if (req.raw) return `RAW ${req.defect}: ${JSON.stringify(req.raw.toString("latin1").slice(0, 160))}`;
	const body = req.body === undefined ? "" : ` body ${JSON.stringify(String(req.body).slice(0, 160))}`;
	return `${req.method} ${req.path.slice(0, 200)} [${req.defect}]${body}`;
}

/** Runs the requests with CONCURRENCY in flight; answers in order. */
const timings: [number, FuzzRequest][] = [];

async function runAll(requests: FuzzRequest[], client: ReturnType<typeof createClient>): Promise<(RawResponse | Error)[]> {
	const answers: (RawResponse | Error)[] = new Array(requests.length);
	let next = 0;
	await Promise.all(
		Array.from({ length: CONCURRENCY }, async () => {
			while (next < requests.length) {
				const i = next++;
				const t = Date.now();
				answers[i] = await send(client, requests[i]).catch((err: Error) => err);
				timings.push([Date.now() - t, requests[i]]);
			}
		}),
	);
	return answers;
}

describe("Fuzzing every endpoint with bad input", () => {
	test("When an endpoint is in the gateway's route tables, then the fuzzer has a spec for it", () => {
		const missing = tableRoutes().filter(route => !byRoute.has(route));

		expect(missing).toEqual([]);
	});

	test(`When ${REQUESTS.toLocaleString("en")} generated bad requests (seed ${SEED}) hit every endpoint, then the process stays up, answers no undocumented 5xx, keeps the documented error shapes and changes no database`, async () => {
		// Arrange
		const generationStarted = Date.now();
		const random = createRandom(SEED);
		const specs = [...byRoute.values()];
		const requests: FuzzRequest[] = [];
		for (let i = 0; i < REQUESTS; i++) {
			const r = random.fork(i);
			requests.push(r.chance(MALFORMED_SHARE) ? malformedHttp(built.world, r) : generate(specs[i % specs.length], built.world, r));
		}
		const generated = Date.now();
		const client = createClient(app.url, CONCURRENCY);
		const crashes: string[] = [];
		const onCrash = (err: unknown) => crashes.push(String((err as Error)?.stack ?? err));
		process.on("unhandledRejection", onCrash);
		process.on("uncaughtException", onCrash);
		const problems: string[] = [];
		const changes: string[] = [];
		const statuses = new Map<number, number>();
		const started = Date.now();
		let before = await watcher.snapshot();
		if (process.env.FUZZ_TIMINGS)
			console.log(`generated in ${generated - generationStarted} ms, first snapshot in ${Date.now() - generated} ms`);

		// Act
		try {
			for (let from = 0; from < requests.length; from += BATCH) {
				const batch = requests.slice(from, from + BATCH);
				const answers = await runAll(batch, client);
				batch.forEach((req, i) => {
					const answer = answers[i];
					const spec = byRoute.get(req.route) ?? null;
					const found = answer instanceof Error ? [`no answer: ${answer.message}`] : answerProblems(spec, req, answer);
					if (!(answer instanceof Error)) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
					for (const problem of found) problems.push(`#${from + i} ${describeRequest(req)}\n    -> ${problem}`);
				});
				const after = await watcher.snapshot();
				const diff = differences(before, after);
				if (diff.length) {
					const suspects = batch.map((req, i) => ({ req, i: from + i })).filter(({ req }) => byRoute.get(req.route)?.changesState);
					const among = suspects.map(s => `#${s.i} ${describeRequest(s.req).slice(0, 160)}`);
					changes.push(
						`requests #${from}-#${from + batch.length - 1} changed:\n    ${diff.slice(0, 20).join("\n    ")}\n  among the requests to endpoints that change state:\n    ${among.join("\n    ")}`,
					);
				}
				before = after;
			}
		} finally {
			process.off("unhandledRejection", onCrash);
			process.off("uncaughtException", onCrash);
			client.close();
		}
		const seconds = (Date.now() - started) / 1000;
		const health = await app.http().get("/actuator/health");
		if (process.env.FUZZ_TIMINGS)
			console.log(
				timings
					.sort((a, b) => b[0] - a[0])
					.slice(0, 30)
					.map(([ms, r]) => `${ms} ms ${describeRequest(r)}`)
					.join("\n"),
			);

		// Assert
		console.log(
			`Fuzz seed ${SEED}: ${requests.length} requests (${requests.filter(r => r.raw).length} malformed HTTP) in ${seconds.toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`,
		);
		// FUZZ_REQUESTS may shrink a local run; the default run is the issue's 10,000.
		if (process.env.FUZZ_REQUESTS === undefined) expect(requests.length).toBeGreaterThanOrEqual(10_000);
		expect(crashes).toEqual([]);
		expect(health.body.status).toBe("UP");
		expect(problems.slice(0, 40)).toEqual([]);
		expect(changes.slice(0, 3)).toEqual([]);
		expect(errorLogs.slice(0, 20)).toEqual([]);
		// A hang guard, not a speed check: 76-157 s alone with a busy loop beside it, 283 s with two more suites beside it.
	}, 420_000);
});

// --- Regression corpus ---------------------------------------------------------

interface CorpusEntry {
	/** What broke when this input was found. */
	found: string;
	/** `body` is sent as JSON unless a string; `bodyBase64` for bytes that are not text. */
	request: { method: string; path: string; headers?: Record<string, string>; body?: string | object; bodyBase64?: string };
	/** Sent as these bytes over a raw socket instead (malformed HTTP). */
	raw?: string;
	expect: { status: number; body?: unknown; text?: string };
}

/** In a corpus entry, `{{name}}` is the world's value of that name; `{{deep:N}}` JSON nested N levels; `{{repeat:N:text}}` text N times. */
function fill(text: string, world: World): string {
	return (
		text
			// "{{#name}}", quotes included: the world's value as a JSON number (bodies keep their JSON types).
			.replace(/"\{\{#(\w+)\}\}"/g, (_, name: keyof World) => String(Number(world[name])))
			.replace(/\{\{deep:(\d+)\}\}/g, (_, n) => `${'{"a":'.repeat(Number(n))}1${"}".repeat(Number(n))}`)
			.replace(/\{\{repeat:(\d+):([^}]*)\}\}/g, (_, n, part) => part.repeat(Number(n)))
			.replace(/\{\{(\w+)\}\}/g, (_, name: keyof World) => {
				if (!(name in world)) throw new Error(`fuzz-corpus.json: unknown placeholder {{${String(name)}}}`);
				return String(world[name]);
			})
	);
}

const corpus = JSON.parse(readFileSync(path.join(__dirname, "fuzz-corpus.json"), "utf8")) as CorpusEntry[];

describe("Inputs that once broke something (fuzz-corpus.json)", () => {
	test.each(corpus.map(entry => [entry.found, entry] as const))(
		"When the input that found %s is sent again, then it is answered as documented and changes nothing",
		async (_, entry) => {
			// Arrange
			const world = built.world;
			const before = await watcher.snapshot();
			const client = createClient(app.url, 1);

			// Act
			let res: RawResponse;
			try {
				if (entry.raw !== undefined) {
					res = parseRawResponse(await sendRawBytes(app.url, Buffer.from(fill(entry.raw, world), "latin1")))!;
				} else {
					const { body: text, bodyBase64 } = entry.request;
					const body =
						bodyBase64 !== undefined
							? Buffer.from(bodyBase64, "base64")
							: text === undefined
								? undefined
								: fill(typeof text === "string" ? text : JSON.stringify(text), world);
					const headers = Object.fromEntries(Object.entries(entry.request.headers ?? {}).map(([k, v]) => [k, fill(v, world)]));
					res = await client.send({ method: entry.request.method, path: fill(entry.request.path, world), headers, body });
				}
			} finally {
				client.close();
			}

			// Assert
			expect(res).toBeDefined();
			expect(res.status).toBe(entry.expect.status);
			if (entry.expect.body !== undefined) expect(JSON.parse(res.body)).toEqual(JSON.parse(fill(JSON.stringify(entry.expect.body), world)));
			if (entry.expect.text !== undefined) expect(res.body).toBe(fill(entry.expect.text, world));
			expect(differences(before, await watcher.snapshot())).toEqual([]);
			expect((await app.http().get("/actuator/health")).body.status).toBe("UP");
		},
	);
});
