// Configuration comes from environment variables only; every variable is
// validated once at start-up so a typo fails fast with the variable's name.
import path from "node:path";

export const ALL_SERVICES = [
	"gateway",
	"accounts",
	"sessions",
	"checkout",
	"payments",
	"billing",
	"invoicing",
	"refunds",
	"notifications",
	"dashboard",
	"metrics",
	"portal",
	"usage",
] as const;
export type ServiceName = (typeof ALL_SERVICES)[number];

export interface Config {
	port: number;
	mongoUrl: string | undefined;
	transporter: string | undefined;
	services: ServiceName[];
	namespace: string;
	adminToken: string | undefined;
	logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace";
	timeZone: string;
	dataDir: string;
	demo: boolean;
	bodyLimit: string;
	rateLimitPerSecond: number;
	authFailuresPerMinute: number;
	/** Checkout submissions per minute per client address (the checkout needs no token). */
	checkoutsPerMinute: number;
	/** When the renewal cycle runs (cron, in TIME_ZONE). */
	renewalCron: string;
	/** How many days before a renewal the card will have expired by the merchant hears of it (CARD_EXPIRING). */
	cardExpiringDays: number;
	/** Days after a renewal's first decline on which it is retried, unless an account sets its own (accounts' renewalRetryDays). */
	renewalRetryDays: number[];
	/** How long a billing node may hold a customer's renewal before another may take it over. */
	renewalLeaseMs: number;
	/** How often each billing node looks for refunds left unsettled by a crash. */
	refundRecoveryIntervalMs: number;
	/** How long a refund may stay unsettled before the recovery settles it; above REQUEST_TIMEOUT_MS. */
	refundRecoveryGraceMs: number;
	/** How long a service may not reach its database before it logs that once at error level. */
	dbOutageLogSeconds: number;
	/** A MID's chargeback ratio (a fraction) at which its health shows a warning (docs/disputes.md#mid-health). */
	chargebackWarningRatio: number;
	/** How old a MID cap's reservation must be before a full MID settles it by what the processor says of its charge. */
	midCapReviewMs: number;
	/** PEM private key that decrypts card data (checkout). */
	cardPrivateKey: string | undefined;
	/** The previous key, still accepted until `cardPreviousKeyUntil` after a rotation. */
	cardPreviousPrivateKey: string | undefined;
	cardPreviousKeyUntil: Date | undefined;
	/** Keys the card fingerprint (HMAC) used by the duplicate-subscription check. */
	cardFingerprintKey: string | undefined;
	/** AES-256 key (base64, 32 bytes) of the sandbox processor's card vault (billing). */
	vaultKey: string | undefined;
	/** Master keys the vault was sealed under before VAULT_KEY: they unseal until every card is re-wrapped. */
	vaultPreviousKeys: string[];
	/** The payments service's RSA key: the gateway seals a MID's processor key to it before the key crosses the transporter. */
	credentialsPrivateKey: string | undefined;
	/** The key-encryption key of MIDs' processor keys at rest, and the ones before it during a rotation. */
	credentialsKey: string | undefined;
	credentialsPreviousKeys: string[];
	/** Signs the links buyers open their invoices and credit notes by (billing; docs/invoices.md#links). */
	invoiceLinkKey: string | undefined;
	/** Where Stripe is reached, for every MID (a test server's address in tests); undefined: Stripe itself. */
	stripeApiBase: string | undefined;
	/** Where Adyen's Checkout API is reached in place of its test platform (a test server: Prism); unset: Adyen itself. */
	adyenApiBase: string | undefined;
	/** "localstripe" leaves out the parameters that emulator refuses (tests only). */
	stripeApiDialect: "stripe" | "localstripe";
	/** Longest a webhook attempt may take, connection to answer (notifications). */
	webhookTimeoutMs: number;
	/** First retry delay of a failed webhook; it doubles per failure, capped at 1 h. */
	webhookRetryBaseMs: number;
	/** How long after its event a webhook is retried before it is DEAD (decimals allowed). */
	webhookRetryHours: number;
	/** The same for sandbox accounts. */
	webhookSandboxRetryHours: number;
	/** How long an event of an account without a webhook URL waits for one before it is DEAD. */
	webhookWaitDays: number;
	/** Longest a call between services may take before it fails with 503 (and an idempotent one is retried). */
	requestTimeoutMs: number;
	/** Port of this node's Prometheus endpoint (`/metrics`); unset: metrics off. */
	metricsPort: number | undefined;
	/** Tracing exporter: spans of every action call, printed to the console, or none. */
	tracing: "off" | "console";
	/** A dashboard session ends after this many minutes without a request (decimals allowed, for tests). */
	dashboardIdleMinutes: number;
	/** Failed sign-ins in a row that lock an email, and for how many minutes. */
	dashboardLockoutFailures: number;
	dashboardLockoutMinutes: number;
	/** Sign-in attempts per minute per client address, on top of the per-email lockout. */
	dashboardSignInsPerMinute: number;
	/** Customer portal links opened per minute per client address, and requests per minute per portal session. */
	portalOpensPerMinute: number;
	portalRequestsPerMinute: number;
	/** The service's address as buyers reach it (card update links); unset: the address the dashboard was opened at. */
	publicBaseUrl: string | undefined;
	/** Where buyers' emails are sent (smtp:// or smtps://, credentials allowed); undefined: none are sent, they wait (docs/emails.md). */
	smtpUrl: string | undefined;
	/** The sender of an account's emails that names none. */
	emailFrom: string;
	/** First retry delay of an email the SMTP server did not take; it doubles per failure, capped at 1 h. */
	emailRetryBaseMs: number;
	/** How long after its event an email is retried before it is DEAD (decimals allowed). */
	emailRetryHours: number;
	/** Hours after a period's end in which its late usage events still count, billed as adjustments (docs/usage.md#time). */
	usageGraceHours: number;
	/** How long a usage batch is held by its node before another node's sweep finishes it (docs/usage.md#crashes). */
	usageBatchLeaseMs: number;
}

export class ConfigError extends Error {
	constructor(variable: string, problem: string) {
		super(`Invalid configuration: ${variable} ${problem}`);
		this.name = "ConfigError";
	}
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
	const raw = env[name];
	if (raw === undefined || raw === "") return fallback;
	if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
	const value = Number(raw);
	if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
	return value;
}

/** A positive decimal such as `72` or `0.01` (tests shrink retry windows to seconds). */
function decimal(env: Env, name: string, fallback: number, max: number): number {
	const raw = env[name];
	if (raw === undefined || raw === "") return fallback;
	if (!/^\d+(\.\d+)?$/.test(raw)) throw new ConfigError(name, `must be a positive number such as 72 or 0.5, got "${raw}"`);
	const value = Number(raw);
	if (value <= 0 || value > max) throw new ConfigError(name, `must be above 0 and at most ${max}, got ${value}`);
	return value;
}

/** Retry days such as `1,3,5,7`: distinct whole days from 1 to 60, at most 8, kept in order; empty for no retries. */
export const RETRY_DAYS_LIMITS = { min: 1, max: 60, count: 8 } as const;

function retryDays(env: Env, name: string, fallback: number[]): number[] {
	const raw = env[name];
	if (raw === undefined) return fallback;
	const days = raw
		.split(",")
		.map(s => s.trim())
		.filter(Boolean);
	const { min, max, count } = RETRY_DAYS_LIMITS;
	if (
		days.some(d => !/^\d+$/.test(d) || Number(d) < min || Number(d) > max) ||
		days.length > count ||
		new Set(days.map(Number)).size !== days.length
	)
		throw new ConfigError(name, `must be up to ${count} distinct whole days from ${min} to ${max}, such as 1,3,5,7, got "${raw}"`);
	return days.map(Number).sort((a, b) => a - b);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
	const raw = env[name];
	if (raw === undefined || raw === "") return fallback;
	if (!(allowed as readonly string[]).includes(raw)) {
		throw new ConfigError(name, `must be one of ${allowed.join(", ")}, got "${raw}"`);
	}
	return raw as T;
}

function url(env: Env, name: string, schemes: string[]): string | undefined {
	const raw = env[name];
	if (raw === undefined || raw === "") return undefined;
	const scheme = raw.split("://")[0];
	if (!raw.includes("://") || !schemes.includes(scheme)) {
		throw new ConfigError(name, `must be a URL starting with ${schemes.map(s => `${s}://`).join(" or ")}`);
	}
	return raw;
}

/** TRANSPORTER: one NATS server's URL, or a cluster's, comma-separated (a node connects to any and fails over to the others). */
function natsServers(env: Env): string | undefined {
	const raw = env.TRANSPORTER;
	if (raw === undefined || raw === "") return undefined;
	for (const entry of raw.split(",")) {
		const parsed = URL.canParse(entry) ? new URL(entry) : undefined;
		if (parsed?.protocol !== "nats:" || !parsed.host)
			throw new ConfigError("TRANSPORTER", `must be nats:// URLs separated by commas, such as nats://a:4222,nats://b:4222, got "${entry}"`);
	}
	return raw;
}

/** An address such as https://pay.example.com: a scheme and a host, no path. */
function baseUrl(env: Env, name: string): string | undefined {
	const raw = url(env, name, ["https", "http"]);
	if (raw === undefined) return undefined;
	const parsed = URL.canParse(raw) ? new URL(raw) : undefined;
	if (parsed?.pathname !== "/" || parsed.search || parsed.hash || parsed.username || parsed.password)
		throw new ConfigError(name, `must be a scheme and a host only, such as https://pay.example.com, got "${raw}"`);
	return parsed.origin;
}

function timeZone(env: Env): string {
	const zone = env.TIME_ZONE || "CET";
	try {
		new Intl.DateTimeFormat("en", { timeZone: zone });
	} catch {
		throw new ConfigError("TIME_ZONE", `must be an IANA time zone such as CET or Europe/Berlin, got "${zone}"`);
	}
	return zone;
}

function services(env: Env): ServiceName[] {
	const raw = env.SERVICES;
	if (!raw) return [...ALL_SERVICES];
	const names = raw
		.split(",")
		.map(s => s.trim())
		.filter(Boolean);
	for (const name of names) {
		if (!(ALL_SERVICES as readonly string[]).includes(name)) {
			throw new ConfigError("SERVICES", `names an unknown service "${name}" (known: ${ALL_SERVICES.join(", ")})`);
		}
	}
	if (names.length === 0) throw new ConfigError("SERVICES", "must name at least one service");
	return names as ServiceName[];
}

function pem(env: Env, name: string): string | undefined {
	const raw = env[name];
	if (!raw) return undefined;
	const text = raw.replace(/\\n/g, "\n");
	if (!/-----BEGIN (RSA )?PRIVATE KEY-----/.test(text))
		throw new ConfigError(name, "must be a PEM private key (-----BEGIN PRIVATE KEY-----)");
	return text;
}

function secret(env: Env, name: string, bytes: number): string | undefined {
	const raw = env[name];
	if (!raw) return undefined;
	if (Buffer.from(raw, "base64").length !== bytes) throw new ConfigError(name, `must be ${bytes} random bytes in base64`);
	return raw;
}

/** A comma list of 32-byte keys in base64 (a rotation's previous keys). */
function secretList(env: Env, name: string): string[] {
	return (env[name] ?? "")
		.split(",")
		.map(k => k.trim())
		.filter(Boolean)
		.map(k => secret({ [name]: k }, name, 32)!);
}

function cron(env: Env): string {
	const raw = env.RENEWAL_CRON || "0 * * * *";
	if (!/^(\S+\s+){4,5}\S+$/.test(raw.trim()))
		throw new ConfigError("RENEWAL_CRON", `must be a cron expression such as "0 * * * *", got "${raw}"`);
	return raw.trim();
}

function dateTime(env: Env, name: string): Date | undefined {
	const raw = env[name];
	if (!raw) return undefined;
	const date = new Date(raw);
	if (Number.isNaN(date.getTime())) throw new ConfigError(name, `must be an ISO 8601 date-time, got "${raw}"`);
	return date;
}

export function loadConfig(env: Env = process.env): Config {
	const adminToken = env.ADMIN_TOKEN || undefined;
	if (adminToken !== undefined && adminToken.length < 16) {
		throw new ConfigError("ADMIN_TOKEN", "must be at least 16 characters long");
	}
	const bodyLimit = env.BODY_LIMIT || "100kb";
	if (!/^\d+(b|kb|mb)$/i.test(bodyLimit)) throw new ConfigError("BODY_LIMIT", `must look like 100kb or 1mb, got "${bodyLimit}"`);
	const namespace = env.NAMESPACE || "";
	if (!/^[A-Za-z0-9_-]*$/.test(namespace)) throw new ConfigError("NAMESPACE", "may hold only letters, digits, '-' and '_'");
	const requestTimeoutMs = integer(env, "REQUEST_TIMEOUT_MS", 10_000, 100, 300_000);
	const refundRecoveryGraceMs = integer(env, "REFUND_RECOVERY_GRACE_MS", 120_000, 1000, 24 * 3_600_000);
	// A refund request still at work must never be taken for a crashed one.
	if (refundRecoveryGraceMs <= requestTimeoutMs) {
		throw new ConfigError(
			"REFUND_RECOVERY_GRACE_MS",
			`must be above REQUEST_TIMEOUT_MS (${requestTimeoutMs}), got ${refundRecoveryGraceMs}`,
		);
	}
	if (Boolean(env.CARD_PREVIOUS_PRIVATE_KEY) !== Boolean(env.CARD_PREVIOUS_KEY_UNTIL)) {
		throw new ConfigError(
			"CARD_PREVIOUS_KEY_UNTIL",
			"and CARD_PREVIOUS_PRIVATE_KEY must be set together (the previous key and the end of its grace period)",
		);
	}
	return {
		port: integer(env, "PORT", 3000, 0, 65535),
		mongoUrl: url(env, "MONGO_URL", ["mongodb", "mongodb+srv"]),
		transporter: natsServers(env),
		services: services(env),
		namespace,
		adminToken,
		logLevel: oneOf(env, "LOG_LEVEL", ["fatal", "error", "warn", "info", "debug", "trace"] as const, "info"),
		timeZone: timeZone(env),
		dataDir: path.resolve(env.DATA_DIR || "./data"),
		demo: oneOf(env, "DEMO", ["0", "1"] as const, "1") === "1",
		bodyLimit,
		rateLimitPerSecond: integer(env, "RATE_LIMIT_PER_SECOND", 100, 1, 1_000_000),
		authFailuresPerMinute: integer(env, "AUTH_FAILURES_PER_MINUTE", 60, 1, 1_000_000),
		checkoutsPerMinute: integer(env, "CHECKOUTS_PER_MINUTE", 60, 1, 1_000_000),
		renewalCron: cron(env),
		renewalRetryDays: retryDays(env, "RENEWAL_RETRY_DAYS", [1, 3, 5, 7]),
		cardExpiringDays: integer(env, "CARD_EXPIRING_DAYS", 30, 1, 365),
		renewalLeaseMs: integer(env, "RENEWAL_LEASE_MS", 60_000, 1000, 3_600_000),
		refundRecoveryIntervalMs: integer(env, "REFUND_RECOVERY_INTERVAL_MS", 30_000, 100, 3_600_000),
		refundRecoveryGraceMs,
		dbOutageLogSeconds: integer(env, "DB_OUTAGE_LOG_SECONDS", 60, 1, 86_400),
		chargebackWarningRatio: decimal(env, "CHARGEBACK_WARNING_PERCENT", 0.65, 100) / 100,
		midCapReviewMs: integer(env, "MID_CAP_REVIEW_MS", 900_000, 1000, 24 * 3_600_000),
		cardPrivateKey: pem(env, "CARD_PRIVATE_KEY"),
		cardPreviousPrivateKey: pem(env, "CARD_PREVIOUS_PRIVATE_KEY"),
		cardPreviousKeyUntil: dateTime(env, "CARD_PREVIOUS_KEY_UNTIL"),
		cardFingerprintKey: secret(env, "CARD_FINGERPRINT_KEY", 32),
		vaultKey: secret(env, "VAULT_KEY", 32),
		vaultPreviousKeys: secretList(env, "VAULT_PREVIOUS_KEYS"),
		credentialsPrivateKey: pem(env, "CREDENTIALS_PRIVATE_KEY"),
		credentialsKey: secret(env, "CREDENTIALS_KEY", 32),
		credentialsPreviousKeys: secretList(env, "CREDENTIALS_PREVIOUS_KEYS"),
		invoiceLinkKey: secret(env, "INVOICE_LINK_KEY", 32),
		stripeApiBase: url(env, "STRIPE_API_BASE", ["http", "https"]),
		adyenApiBase: url(env, "ADYEN_API_BASE", ["http", "https"]),
		stripeApiDialect: oneOf(env, "STRIPE_API_DIALECT", ["stripe", "localstripe"] as const, "stripe"),
		webhookTimeoutMs: integer(env, "WEBHOOK_TIMEOUT_MS", 10_000, 50, 120_000),
		webhookRetryBaseMs: integer(env, "WEBHOOK_RETRY_BASE_MS", 5000, 1, 3_600_000),
		webhookRetryHours: decimal(env, "WEBHOOK_RETRY_HOURS", 72, 24 * 365),
		webhookSandboxRetryHours: decimal(env, "WEBHOOK_SANDBOX_RETRY_HOURS", 24, 24 * 365),
		webhookWaitDays: decimal(env, "WEBHOOK_WAIT_DAYS", 30, 365),
		requestTimeoutMs,
		metricsPort: env.METRICS_PORT ? integer(env, "METRICS_PORT", 0, 1, 65535) : undefined,
		tracing: oneOf(env, "TRACING", ["off", "console"] as const, "off"),
		dashboardIdleMinutes: decimal(env, "DASHBOARD_IDLE_MINUTES", 30, 24 * 60),
		dashboardLockoutFailures: integer(env, "DASHBOARD_LOCKOUT_FAILURES", 5, 1, 1000),
		dashboardLockoutMinutes: integer(env, "DASHBOARD_LOCKOUT_MINUTES", 15, 1, 24 * 60),
		dashboardSignInsPerMinute: integer(env, "DASHBOARD_SIGN_INS_PER_MINUTE", 20, 1, 1_000_000),
		portalOpensPerMinute: integer(env, "PORTAL_OPENS_PER_MINUTE", 20, 1, 1_000_000),
		portalRequestsPerMinute: integer(env, "PORTAL_REQUESTS_PER_MINUTE", 120, 1, 1_000_000),
		publicBaseUrl: baseUrl(env, "PUBLIC_BASE_URL"),
		smtpUrl: url(env, "SMTP_URL", ["smtp", "smtps"]),
		emailFrom: env.EMAIL_FROM || "no-reply@payments.invalid",
		emailRetryBaseMs: integer(env, "EMAIL_RETRY_BASE_MS", 5000, 1, 3_600_000),
		emailRetryHours: decimal(env, "EMAIL_RETRY_HOURS", 72, 24 * 365),
		usageGraceHours: decimal(env, "USAGE_GRACE_HOURS", 72, 24 * 31),
		usageBatchLeaseMs: integer(env, "USAGE_BATCH_LEASE_MS", 30_000, 1000, 3_600_000),
	};
}

/**
 * The one base of every link sent to buyers (emails: the receipt's invoice, the card update link; docs/emails.md#links):
 * PUBLIC_BASE_URL, else http://localhost:<PORT> (npm start).
 */
export const buyerBaseUrl = (c: Pick<Config, "publicBaseUrl" | "port">): string => c.publicBaseUrl ?? `http://localhost:${c.port}`;

let cached: Config | undefined;

/** The process-wide configuration, read on first use. */
export function config(): Config {
	cached ??= loadConfig();
	return cached;
}

/** Tests and entry points that change the environment call this to re-read it. */
export function resetConfig(): void {
	cached = undefined;
}
