// The log of every app a test starts: the production logger's formatting and
// redaction (shared/redacting-logger.ts), written to a file per test process
// instead of the console, so the global teardown can scan the whole suite's
// logs for card data and secrets (log-scan.ts) and the console stays quiet.
import { appendFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { RedactingConsoleLogger } from "../../shared/redacting-logger";

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace";
type Level = LogLevel;
const LEVELS: Level[] = ["fatal", "error", "warn", "info", "debug", "trace"];

/** Where the run's logs go; the global setup sets it for the test processes. */
export const LOG_DIR_VARIABLE = "TEST_LOG_DIR";

/** A Moleculer logger that hands each formatted, redacted line to `sink`. */
export class CapturingLogger extends RedactingConsoleLogger {
	constructor(
		opts: { level: Level },
		private readonly sink: (line: string) => void,
		private readonly onStop: () => void = () => {},
	) {
		super({ level: opts.level, formatter: "short", colors: false });
	}

	// Called when the broker stops: the lines are on disk before the test file ends.
	override stop() {
		this.onStop();
		return super.stop();
	}

	override getLogHandler(bindings: Parameters<RedactingConsoleLogger["getLogHandler"]>[0]) {
		const level = bindings ? this.getLogLevel(bindings.mod) : null;
		if (!level) return null;
		const format = this.getFormatter(bindings);
		const max = LEVELS.indexOf(level as Level);
		return (type: Level, args: unknown[]) => {
			if (LEVELS.indexOf(type) <= max) this.sink(format(type, args).join(" "));
		};
	}
}

let buffer: string[] = [];
let flushTimer: NodeJS.Timeout | undefined;

function logFile(): string | undefined {
	const dir = process.env[LOG_DIR_VARIABLE];
	if (!dir) return undefined;
	mkdirSync(dir, { recursive: true });
	return path.join(dir, `${process.pid}.log`);
}

function flush(): void {
	if (flushTimer) clearTimeout(flushTimer);
	flushTimer = undefined;
	const file = logFile();
	if (file && buffer.length) appendFileSync(file, `${buffer.join("\n")}\n`);
	buffer = [];
}
process.on("exit", flush);

/** Appends to this test process's log file (buffered; written at least every 100 ms and at exit). */
function toFile(line: string): void {
	buffer.push(line);
	if (buffer.length >= 500) flush();
	else flushTimer ??= setTimeout(flush, 100).unref();
}

/** The logger startApp gives every app: debug level, so as much as possible is scanned. */
export function testLogger(
	extraSink?: (line: string) => void,
	level: Level = (process.env.TEST_LOG_LEVEL as Level | undefined) ?? "debug",
): CapturingLogger {
	return new CapturingLogger(
		{ level },
		line => {
			toFile(line);
			extraSink?.(line);
		},
		flush,
	);
}
