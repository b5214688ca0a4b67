// Embedded database for development and tests when MONGO_URL is not set.
// Prefers a real mongod (mongodb-memory-server) if its binary is available without network access,
// otherwise runs the MongoDB wire-compatible mongo-java-server (see dev/db/MongoLauncher.java).
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { DryMongoBinary, MongoMemoryServer } from "mongodb-memory-server-core";

export type EmbeddedDbKind = "mongod" | "mongo-java-server";

export interface EmbeddedDb {
	url: string;
	kind: EmbeddedDbKind;
	/** One sentence on why this database was chosen. */
	reason: string;
	stop(): Promise<void>;
	/** mongo-java-server: what each of its threads is doing now (a JVM thread dump), for a test that finds it stuck. */
	threadDump?(): Promise<string>;
	/** mongo-java-server: its process, for a test that kills it as a crash would. */
	pid?: number;
}

export interface EmbeddedDbOptions {
	persistent: boolean;
	dataDir: string;
	/** Listen on this port (default: a free one); a fault test restarts the server where its clients expect it. */
	port?: number;
	log?: (line: string) => void;
}

const REPO = path.resolve(__dirname, "..");
const LIB_DIR = path.join(REPO, ".embedded-db", "lib");
const LAUNCHER = path.join(REPO, "dev", "db", "MongoLauncher.java");
const DOWNLOAD_TIMEOUT_MS = 30_000;
const JAVA_START_TIMEOUT_MS = 60_000;
const KILL_GRACE_MS = 5_000;
const HOW_TO_FIX =
	"To fix: install Maven and Java 17 (apt-get install maven openjdk-17-jre-headless) and re-run `npm install` " +
	"(it fetches the mongo-java-server jars into .embedded-db/lib), or set MONGO_URL to an existing MongoDB.";

export async function startEmbeddedDb(options: EmbeddedDbOptions): Promise<EmbeddedDb> {
	const mongod = await tryMongod(options);
	const db = typeof mongod === "string" ? await startMongoJavaServer(options, mongod) : mongod;
	options.log?.(`embedded db (${db.kind}) at ${db.url}: ${db.reason}`);
	return db;
}

/** Starts a real mongod, or returns why it could not. */
async function tryMongod(options: EmbeddedDbOptions): Promise<EmbeddedDb | string> {
	const allowDownload = process.env.EMBEDDED_DB_DOWNLOAD === "1";
	let binary: string | undefined;
	try {
		// Looks at MONGOMS_SYSTEM_BINARY and the download caches only; never touches the network.
		binary = await DryMongoBinary.locateBinary(DryMongoBinary.getEnsuredOptions());
	} catch (err) {
		return `MONGOMS_SYSTEM_BINARY is set but unusable (${errorText(err)})`;
	}
	if (!binary && !allowDownload) {
		return "no cached mongod binary and downloads are disabled (EMBEDDED_DB_DOWNLOAD=1 allows one)";
	}

	const dbPath = path.join(options.dataDir, "mongod");
	if (options.persistent) fs.mkdirSync(dbPath, { recursive: true });
	const creating = MongoMemoryServer.create({
		instance: {
			ip: "127.0.0.1",
			...(options.port === undefined ? {} : { port: options.port }),
			...(options.persistent ? { dbPath, storageEngine: "wiredTiger" as const } : {}),
		},
		// Passing the located binary as systemBinary guarantees mongodb-memory-server does not download.
		binary: binary ? { systemBinary: binary } : {},
	});

	let server: MongoMemoryServer;
	try {
		server = binary ? await creating : await withTimeout(creating, DOWNLOAD_TIMEOUT_MS, "mongod download");
	} catch (err) {
		// A download that finishes after the timeout must not leave a mongod behind.
		creating.then(late => late.stop()).catch(() => undefined);
		return `mongod could not be started (${errorText(err)})`;
	}

	const source = binary
		? process.env.MONGOMS_SYSTEM_BINARY
			? "MONGOMS_SYSTEM_BINARY"
			: "a cached mongod binary"
		: "a freshly downloaded mongod binary";
	const storage = options.persistent ? `wiredTiger, data in ${displayPath(dbPath)}` : "in-memory, data is lost on stop";
	return {
		url: server.getUri().replace(/\/+$/, ""),
		kind: "mongod",
		reason: `using real mongod from ${source} (${storage}).`,
		stop: async () => {
			await server.stop();
		},
	};
}

async function startMongoJavaServer(options: EmbeddedDbOptions, whyNotMongod: string): Promise<EmbeddedDb> {
	const version = mongoJavaServerVersion();
	if (!version) {
		throw new Error(
			`No embedded database available: ${whyNotMongod}, and the mongo-java-server jars are missing from ${LIB_DIR}. ${HOW_TO_FIX}`,
		);
	}

	// EMBEDDED_DB_JAVA_OPTS adds JVM options, e.g. -Dorg.slf4j.simpleLogger.log.de.bwaldvogel.mongo.wire.MongoExceptionHandler=error
	// to see why the server closed a connection (MongoLauncher.java turns that log off by default).
	const javaOptions = (process.env.EMBEDDED_DB_JAVA_OPTS ?? "").split(/\s+/).filter(Boolean);
	const args = [...javaOptions, "-cp", path.join(LIB_DIR, "*"), LAUNCHER];
	if (options.persistent) {
		fs.mkdirSync(options.dataDir, { recursive: true });
		args.push("--data", path.join(options.dataDir, "mongo-java-server.mv"));
	}
	if (options.port !== undefined) args.push("--port", String(options.port));
	// stdin stays open on purpose: the launcher exits when it closes, i.e. when this process dies.
	const child = spawn("java", args, { stdio: ["pipe", "pipe", "inherit"] });
	child.stdin.on("error", () => undefined); // EPIPE after the child is gone is harmless
	const exited = new Promise<void>(resolve => child.once("exit", () => resolve()));
	const killOnExit = () => child.kill("SIGTERM"); // a clean close: the store file is compacted and unlocked
	process.on("exit", killOnExit);
	void exited.then(() => process.off("exit", killOnExit));

	// Everything the launcher printed on stdout: LISTENING, and thread dumps (threadDump).
	let output = "";
	const port = await new Promise<number>((resolve, reject) => {
		let settled = false;
		const fail = (message: string, hint = "") => {
			if (settled) return; // a later exit is handled by stop()
			settled = true;
			clearTimeout(timer);
			child.kill("SIGKILL");
			const printed = output.trim() ? `; output: ${output.trim()}` : "";
			reject(new Error(`${message}${printed}.${hint ? ` ${hint}` : ""}`));
		};
		const timer = setTimeout(
			() =>
				fail(
					`mongo-java-server did not print LISTENING within ${JAVA_START_TIMEOUT_MS / 1000} s`,
					"Set MONGO_URL to use an existing MongoDB instead.",
				),
			JAVA_START_TIMEOUT_MS,
		);
		child.stdout.setEncoding("utf8");
		child.stdout.on("data", (chunk: string) => {
			output += chunk;
			const match = /^LISTENING (\d+)$/m.exec(output);
			if (match && !settled) {
				settled = true;
				clearTimeout(timer);
				resolve(Number(match[1]));
			}
		});
		child.once("error", err => fail(`could not run java (${errorText(err)})`, HOW_TO_FIX));
		child.once("exit", (code, signal) =>
			fail(
				`mongo-java-server exited early with ${signal ?? `code ${code}`} (its error is on stderr above; it needs Java 17+` +
					`${options.persistent ? ` and exclusive use of ${displayPath(options.dataDir)}` : ""})`,
			),
		);
	});

	const storage = options.persistent ? `H2 backend, data in ${displayPath(options.dataDir)}` : "memory backend, data is lost on stop";
	return {
		url: `mongodb://127.0.0.1:${port}`,
		kind: "mongo-java-server",
		reason: `${whyNotMongod}; using mongo-java-server ${version} (${storage}).`,
		pid: child.pid,
		threadDump: async () => {
			const from = output.length;
			// The JVM prints every thread's stack on SIGQUIT, to its stdout, and goes on.
			child.kill("SIGQUIT");
			await new Promise(resolve => setTimeout(resolve, 1500));
			return output.slice(from);
		},
		stop: async () => {
			if (child.exitCode !== null || child.signalCode !== null) return;
			child.kill("SIGTERM");
			const force = setTimeout(() => child.kill("SIGKILL"), KILL_GRACE_MS);
			await exited;
			clearTimeout(force);
		},
	};
}

/** Version of the installed mongo-java-server jars, or undefined when they are not installed. */
function mongoJavaServerVersion(): string | undefined {
	try {
		for (const file of fs.readdirSync(LIB_DIR)) {
			const match = /^mongo-java-server-core-(.+)\.jar$/.exec(file);
			if (match) return match[1];
		}
	} catch {
		// no lib dir: not installed
	}
	return undefined;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	const timeout = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms / 1000} s`)), ms);
	});
	return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function displayPath(p: string): string {
	const rel = path.relative(process.cwd(), p);
	return rel === "" ? "." : rel.startsWith("..") || path.isAbsolute(rel) ? p : `./${rel}`;
}

function errorText(err: unknown): string {
	// One line: reasons and error messages are meant to be a single sentence.
	return (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ").trim();
}
