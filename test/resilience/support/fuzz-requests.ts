// The fuzzer's requests: for every endpoint a valid request, then one defect
// that must make the service refuse it (wrong types, missing and extra
// fields, huge bodies and headers, deep JSON, NoSQL operators, path
// traversal, wrong content types, garbage JWE, …), plus harmless noise
// (unicode, odd headers) on top. Every request is therefore one the service
// must refuse, so the database must not change at all while they run.
import { brotliDecompressSync, deflateSync, gzipSync } from "node:zlib";
import type { Random } from "./prng";
import type { RawRequest } from "./raw-http";

/** What the fuzzer knows about the app it attacks (see fuzz.test.ts). */
export interface World {
	apiToken: string;
	adminToken: string;
	accountId: number;
	otherAccountId: number;
	productId: number;
	otherProductId: number;
	customerId: number;
	otherCustomerId: number;
	/** The customer's first charge, refundable. */
	transactionId: number;
	/** Refunded in full: refunding it again is always refused. */
	refundedTransactionId: number;
	otherTransactionId: number;
	/** A dispute of the account, needing a response, and one of the other account. */
	disputeId: number;
	otherDisputeId: number;
	sessionId: string;
	otherSessionId: string;
	domain: string;
	eventId: string;
	blockedBin: string;
	/** An email the account blocks (blocked buyers). */
	blockedEmail: string;
	midId: number;
	/** A dashboard user of the account, and one of the other account. */
	dashboardUserId: number;
	otherDashboardUserId: number;
	/** Card number and CVC encrypted to the service's key, as the SDK sends them. */
	encryptedCard: string;
	encryptedCvc: string;
	/** JWEs that are well formed but must be refused (other key, not digits, …). */
	refusedJwes: string[];
	kid: string;
}

/** Every request the fuzzer sends is one of these. */
export interface FuzzRequest extends RawRequest {
	/** `GET /api/customer/:id`: the endpoint it was made from. */
	route: string;
	/** What is wrong with it: `pathParam id=0x10`, `auth: no header`, … */
	defect: string;
	/** The defect must be refused, by a read too (not so a Range header or a traversal, which a read may answer). */
	mustRefuse: boolean;
	/** Sent over a raw socket, bytes as they are (malformed HTTP). */
	raw?: Buffer;
}

type Value = unknown;

interface FieldSpec {
	valid: (w: World) => Value;
	required?: boolean;
	/** Values the service must refuse for this field (beyond the generic wrong types). */
	refused?: (w: World) => Value[];
	/** The field is a string: numbers and booleans would be coerced, so they are not "wrong types" for it. */
	type: "string" | "integer" | "number" | "boolean" | "object" | "nullable-object" | "array" | "any" | "nullable-string";
}

interface PathParamSpec {
	valid: (w: World) => string;
	type: "integer" | "string";
	/** Well-formed values the endpoint must answer as not found (another account's, unknown). */
	absent?: (w: World) => string[];
	/** Malformed values (beyond the generic ones) it must refuse. */
	refused?: string[];
}

export interface EndpointSpec {
	/** `METHOD /full/path/:param`, as the route tables name them with their prefix. */
	route: string;
	auth: "api" | "admin" | "none";
	/** Changes state when accepted: the fuzzer's requests to it must all be refused. */
	changesState: boolean;
	input: "query" | "body" | "none";
	/** The action refuses unknown parameters (every action with a schema does). */
	strict: boolean;
	/** /api endpoints check X-API-Version. */
	versioned: boolean;
	path?: Record<string, PathParamSpec>;
	fields?: Record<string, FieldSpec>;
	/** Request-level defects this endpoint refuses besides the generic ones. */
	special?: (w: World, r: Random) => { defect: string; patch: (req: Draft) => void }[];
}

/** A request being built: structured until it is rendered to bytes. */
export interface Draft {
	method: string;
	path: Record<string, string>;
	query: [string, string][];
	/** Raw query text appended as is (already encoded). */
	rawQuery: string[];
	body: Record<string, Value> | undefined;
	/** Replaces the JSON body with these bytes. */
	rawBody?: string | Buffer;
	contentType: string | null;
	headers: Record<string, string>;
	/** Replaces the rendered path. */
	rawPath?: string;
}

// --- Catalogues of bad values --------------------------------------------------

export const OPERATORS: Value[] = [
	{ $gt: "" },
	{ $ne: null },
	{ $ne: 1 },
	{ $where: "sleep(100) || true" },
	{ $regex: ".*" },
	{ $in: [1, 2, 3] },
	{ $exists: true },
	{ $expr: { $eq: [1, 1] } },
	[{ $gt: "" }],
	{ __proto__: { admin: true } },
	{ constructor: { prototype: { polluted: true } } },
];

const OPERATOR_STRINGS = [
	'{"$gt":""}',
	"$gt",
	"$where",
	"'; return true; var x='",
	"' || '1'=='1",
	"1; db.dropDatabase()",
	"[$ne]=1",
	"{$ne: null}",
];

export const TRAVERSALS = [
	"../../../../etc/passwd",
	"..%2F..%2F..%2F..%2Fetc%2Fpasswd",
	"%2e%2e%2f%2e%2e%2fpackage.json",
	"%2E%2E/%2E%2E/package.json",
	"..%5c..%5c..%5cwindows%5cwin.ini",
	"....//....//etc/passwd",
	"%252e%252e%252fpackage.json",
	"..%c0%af..%c0%afetc%c0%afpasswd",
	"%00",
	"foo%00.html",
	"..",
	".%2e/.%2e/package.json",
	"%2f%2fetc%2fpasswd",
];

const UNICODE = [
	"Zoë Ωmega",
	"日本語の名前",
	"💳🎉👍🏽",
	"\u202eevil.com",
	"a\u0000b",
	"\ud800",
	"\uFEFFbom",
	"İstanbul ß ﬀ",
	"Z̷̡̛a̸l̵g̶o̴",
	"１２３４",
	"١٢٣",
	"\u200d\u200b\u2060",
	"\r\nSet-Cookie: x=1",
	"<script>alert(1)</script>",
	// biome-ignore lint/suspicious/noTemplateCurlyInString: a template injection probe, sent as it is written
	"${7*7}{{7*7}}",
	"%s%n%x",
];

/** Strings that are not integers, and integers out of range; plain numbers Ajv would coerce are left out on purpose. */
const NOT_INTEGERS = [
	"abc",
	"1.5",
	"-1",
	"0",
	"1e3",
	"0x10",
	"0b11",
	" 12",
	"12 ",
	"+5",
	"1_000",
	"9007199254740993",
	"99999999999999999999999",
	"NaN",
	"Infinity",
	"-0",
	"１",
	"١",
	"null",
	"true",
	"[object Object]",
	"1,2",
	"12abc",
];

/** Host names a session must refuse (the spec's 500); never a valid host in any letter case. */
const BAD_DOMAINS = [
	"",
	"https://shop.example.com",
	"shop.example.com:8080",
	"shop.example.com/checkout",
	"shop_1.example.com",
	"bücher.de",
	"-shop.example.com",
	"shop..example.com",
	"shop.example.com.",
	" shop.example.com",
	"*.example.com",
	`${"a".repeat(64)}.com`,
	`${"a.".repeat(127)}com`,
	"shop.example.com\u0000",
	"shop example.com",
	"../../etc/passwd",
	'{"$gt":""}',
	"💳.example.com",
];

function deep(depth: number, leaf: Value = 1): Value {
	let value: Value = leaf;
	for (let i = 0; i < depth; i++) value = { a: value };
	return value;
}

/** `{"a":{"a":…1…}}` as text: too deep for JSON.stringify's stack. */
function deepJson(depth: number): string {
	return `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

function deepArray(depth: number): string {
	return "[".repeat(depth) + "]".repeat(depth);
}

const bombs: { gzip?: Buffer; deflate?: Buffer } = {};
/** 50 MB of spaces, gzipped to about 50 kB: within the body limit on the wire, far past it inflated. */
function gzipBomb(): Buffer {
	bombs.gzip ??= gzipSync(Buffer.alloc(50_000_000, 32));
	return bombs.gzip;
}

function deflateBomb(): Buffer {
	bombs.deflate ??= deflateSync(Buffer.alloc(20_000_000, 32));
	return bombs.deflate;
}

/** Random bytes that are not a brotli stream (some random bytes are: an empty one). */
function notBrotli(r: Random): Buffer {
	for (;;) {
		const bytes = Buffer.from(Array.from({ length: 40 }, () => r.int(0, 255)));
		try {
			brotliDecompressSync(bytes);
		} catch {
			return bytes;
		}
	}
}

function randomString(r: Random, length: number, alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"): string {
	let out = "";
	for (let i = 0; i < length; i++) out += alphabet[r.int(0, alphabet.length - 1)];
	return out;
}

function b64url(value: string | Buffer): string {
	return Buffer.from(value).toString("base64url");
}

/** JWEs the checkout must refuse with INVALID_REQUEST. */
export function garbageJwe(w: World, r: Random): string {
	const header = (h: object) => b64url(JSON.stringify(h));
	const parts = (n: number) => Array.from({ length: n }, () => randomString(r, r.int(0, 60))).join(".");
	const choices: (() => string)[] = [
		() => parts(5),
		() => parts(r.int(1, 4)),
		() => parts(r.int(6, 9)),
		() =>
			[
				header({ alg: "RSA-OAEP-256", enc: "A256GCM", kid: w.kid }),
				randomString(r, 342),
				randomString(r, 16),
				randomString(r, 22),
				randomString(r, 22),
			].join("."),
		() =>
			[
				header({
					alg: r.pick(["none", "dir", "RSA1_5", "RSA-OAEP", "ECDH-ES", "A256KW", "PBES2-HS512+A256KW"]),
					enc: "A256GCM",
					kid: w.kid,
				}),
				"",
				randomString(r, 16),
				randomString(r, 22),
				randomString(r, 22),
			].join("."),
		() =>
			[
				header({ alg: "RSA-OAEP-256", enc: r.pick(["A128CBC-HS256", "A128GCM", "none", ""]), kid: w.kid }),
				randomString(r, 342),
				randomString(r, 16),
				randomString(r, 22),
				randomString(r, 22),
			].join("."),
		() =>
			[
				header({ alg: "RSA-OAEP-256", enc: "A256GCM", kid: r.pick([{ $gt: "" }, "../../etc/passwd", "x".repeat(2000), null, 42, ["a"]]) }),
				randomString(r, 342),
				randomString(r, 16),
				randomString(r, 22),
				randomString(r, 22),
			].join("."),
		() =>
			[
				header({ alg: "RSA-OAEP-256", enc: "A256GCM", kid: w.kid, zip: "DEF" }),
				randomString(r, 342),
				randomString(r, 16),
				randomString(r, 22),
				randomString(r, 22),
			].join("."),
		() => [b64url("not json"), "a", "b", "c", "d"].join("."),
		() => [b64url('{"alg":"RSA-OAEP-256","enc":"A256GCM","kid":'), "a", "b", "c", "d"].join("."),
		() => [b64url(deepJson(5000)), "a", "b", "c", "d"].join("."),
		() => "....",
		() => "%%%%.%%%%.%%%%.%%%%.%%%%",
		() => r.pick(UNICODE),
		() => r.pick(w.refusedJwes),
		() => r.pick(w.refusedJwes),
		// A real card in plaintext where the JWE belongs: refused, and never stored or logged.
		() => "4242424242424242",
	];
	return r.pick(choices)();
}

const BAD_TOKENS = (r: Random): [string, string | undefined][] => [
	["no header", undefined],
	["empty", ""],
	["Bearer without token", "Bearer "],
	["unknown token", `Bearer sk_test_${randomString(r, 43)}`],
	["live-looking token", `Bearer sk_live_${randomString(r, 43)}`],
	["Basic scheme", `Basic ${b64url("admin:admin")}`],
	["NoSQL operator", 'Bearer {"$gt":""}'],
	["NoSQL operator (ne)", 'Bearer {"$ne":null}'],
	["regex", "Bearer .*"],
	["too long", `Bearer ${randomString(r, 20).repeat(250)}`],
	[
		"garbage JWE",
		`Bearer ${randomString(r, 30)}.${randomString(r, 30)}.${randomString(r, 30)}.${randomString(r, 30)}.${randomString(r, 30)}`,
	],
	["token twice", "Bearer a, Bearer b"],
	["latin1 bytes", "Bearer \u00e9\u00e8\u00ff\u00fe"],
	["traversal", "Bearer ../../../../etc/passwd"],
	["SQL", "Bearer ' OR '1'='1"],
	["lower-case scheme, unknown token", `bearer sk_test_${randomString(r, 43)}`],
];

// --- The endpoints --------------------------------------------------------------

const text = (value: string, required = true): FieldSpec => ({ valid: () => value, type: "string", required });
/** A MID's processor (POST and PATCH of a MID): the Stripe key's shape, the environment's rules and the object's own. */
const midProcessor: FieldSpec = {
	valid: () => ({ type: "sandbox" }),
	type: "nullable-object",
	refused: () => [
		{ type: "stripe" },
		{ type: "stripe", secretKey: "pk_test_1234567890" },
		{ type: "stripe", secretKey: 12 },
		{ type: "stripe", secretKey: "sk_live_1234567890" },
		{ type: "adyen" },
		{ type: "adyen", apiKey: "AQE short", merchantAccount: "Shop" },
		{ type: "adyen", apiKey: "AQEyhmfxK4PJbhZKw0m/n3Q5qf3VaY9UCJ1", merchantAccount: "Shop Com" },
		{ type: "adyen", apiKey: "AQEyhmfxK4PJbhZKw0m/n3Q5qf3VaY9UCJ1", merchantAccount: "Shop", hmacKey: "xyz" },
		{ type: "adyen", apiKey: "AQEyhmfxK4PJbhZKw0m/n3Q5qf3VaY9UCJ1", merchantAccount: "Shop", liveUrlPrefix: "1797a841fbb37ca7-AdyenDemo" },
		{ type: "paypal" },
		{ type: "sandbox", secretKey: "sk_test_1234567890" },
		{ type: { $ne: "x" } },
	],
};
const futureIso = () => new Date(Date.now() + 3_600_000).toISOString();

/**
 * Cursors a list must refuse: text it never gave out, and cursors in its format
 * (shared/list-page.ts) made for another account, for other filters, or with
 * a position that cannot be one.
 */
const badCursors = (w: World): string[] => [
	"zzz",
	"not a cursor",
	"",
	"x".repeat(1001),
	"eyJ%",
	b64url("null"),
	b64url('{"a":{"$gt":0},"f":"[]","p":1}'),
	b64url(JSON.stringify({ a: w.otherAccountId, f: "[]", p: 1 })),
	b64url(JSON.stringify({ a: w.accountId, f: '[["list","other"]]', p: 1 })),
	b64url(JSON.stringify({ a: w.accountId, f: "[]", p: -1 })),
	b64url(JSON.stringify({ a: w.accountId, f: "[]", p: 1.5 })),
];

/** The parameters every list takes (docs/openapi.json, ListLimit and ListCursor); the valid request sends no cursor. */
const listFields = (): Record<string, FieldSpec> => ({
	limit: { valid: () => 10, type: "integer", refused: () => [0, 101, -1, 1000] },
	cursor: { valid: () => undefined, type: "string", refused: badCursors },
});

/** `from` and `to` (ListFrom, ListTo): real dates, `from` not after `to` (2100-01-01 and 2019-12-31 are, against the other's valid value). */
const dateRangeFields = (): Record<string, FieldSpec> => ({
	from: {
		valid: () => "2020-01-01",
		type: "string",
		refused: () => ["2026-02-30", "2026-13-01", "20260101", "2026-1-1", "", "yesterday", "2026-11-22T00:00:00", "2100-01-01"],
	},
	to: {
		valid: () => "2099-12-31",
		type: "string",
		refused: () => ["2026-02-30", "2026-00-10", "9999-99-99", "", "tomorrow", "2019-12-31"],
	},
});

/**
 * GET /api/metrics's query (docs/api.md#get-apimetrics): real days, `from` not after `to`, at most 1,096 days, one of
 * productId and midId (the valid request names the product, so a MID is refused beside it), another account's product
 * not found.
 */
const metricsFields = (): Record<string, FieldSpec> => ({
	from: {
		valid: () => "2026-01-01",
		type: "string",
		refused: () => [
			"2026-02-30",
			"2026-13-01",
			"20260101",
			"",
			"yesterday",
			"2026-01-01T00:00:00",
			"2026-04-01",
			"1969-12-31",
			"2022-12-31",
		],
	},
	to: { valid: () => "2026-03-31", type: "string", refused: () => ["2026-02-30", "9999-99-99", "", "2025-12-31", "2029-01-01"] },
	granularity: { valid: () => "week", type: "string", refused: () => ["year", "WEEK", "days", ""] },
	productId: { valid: w => w.productId, type: "integer", refused: w => [0, -1, w.otherProductId] },
	midId: { valid: () => undefined, type: "integer", refused: w => [0, -1, w.midId] },
	currency: { valid: () => "EUR", type: "string", refused: () => ["eur", "EURO", "E", ""] },
});

const transactionFilters = (): Record<string, FieldSpec> => ({
	type: { valid: () => "SUBSCRIPTION_START", type: "string", refused: () => ["REFUND", "subscription_start", ""] },
	status: { valid: () => "APPROVED", type: "string", refused: () => ["SUCCESS", "approved", ""] },
});

/** A new dashboard user's email (services/dashboard/schemas.ts); the valid one is free, so a request is refused for its defect alone. */
const dashboardEmail = (): FieldSpec => ({
	valid: () => "new@fuzz-shop.example.com",
	type: "string",
	required: true,
	refused: () => [
		"not-an-email",
		"@",
		"a@",
		"@example.com",
		"a@b@example.com",
		"ab",
		"",
		"new @fuzz-shop.example.com",
		" new@fuzz-shop.example.com",
		"new@fuzz-shop.example.com\n",
		"new@fuzz-shop.example.com\u00a0",
		`${"a".repeat(250)}@example.com`,
	],
});

/** A dashboard user's `role` and `password`, required or not. */
const dashboardUserFields = (opts: { roleRequired: boolean }): Record<string, FieldSpec> => ({
	role: {
		valid: () => "operator",
		type: "string",
		required: opts.roleRequired,
		refused: () => ["admin", "owner", "Operator", "VIEWER", "", " viewer"],
	},
	password: {
		valid: () => "a long enough passphrase",
		type: "string",
		refused: () => ["short", "x".repeat(11), "", "x".repeat(201)],
	},
});

/** The endpoints, by the route tables (services/gateway/endpoints.ts) plus the health check and the static files. */
export function endpointSpecs(): EndpointSpec[] {
	const accountPath = (opts: { absentRejected: boolean }): Record<string, PathParamSpec> => ({
		accountId: { valid: w => String(w.accountId), type: "integer", absent: opts.absentRejected ? () => ["987654321"] : undefined },
	});
	const api = { auth: "api" as const, versioned: true, strict: true };
	const admin = { auth: "admin" as const, versioned: false, strict: true };
	const publicApi = { auth: "none" as const, versioned: true, strict: true };

	return [
		// /api, API token
		{
			...api,
			route: "POST /api/session",
			changesState: true,
			input: "query",
			fields: { domain: { valid: w => w.domain, type: "any", required: true, refused: () => BAD_DOMAINS } },
		},
		{
			...api,
			route: "GET /api/session",
			changesState: false,
			input: "query",
			fields: {
				sessionId: {
					valid: w => w.sessionId,
					type: "string",
					required: true,
					refused: w => [w.otherSessionId, "not-a-uuid", `${w.sessionId}x`],
				},
			},
		},
		{
			...api,
			route: "GET /api/customer/:id",
			changesState: false,
			input: "query",
			path: { id: { valid: w => String(w.customerId), type: "integer", absent: w => [String(w.otherCustomerId), "987654321"] } },
		},
		{
			...api,
			route: "GET /api/transaction/:id",
			changesState: false,
			input: "query",
			path: {
				id: { valid: w => String(w.refundedTransactionId), type: "integer", absent: w => [String(w.otherTransactionId), "987654321"] },
			},
		},
		{
			...api,
			route: "GET /api/customers",
			changesState: false,
			input: "query",
			fields: {
				...listFields(),
				email: { valid: () => "fuzz@example.com", type: "string", refused: () => ["", "x".repeat(255)] },
				status: { valid: () => "ACTIVE", type: "string", refused: () => ["active", "CANCELLED", "REFUNDED", ""] },
				productId: { valid: w => w.productId, type: "integer", refused: () => [0, -1] },
				...dateRangeFields(),
			},
		},
		{
			...api,
			route: "GET /api/transactions",
			changesState: false,
			input: "query",
			fields: {
				...listFields(),
				customerId: { valid: w => w.customerId, type: "integer", refused: () => [0, -1] },
				...transactionFilters(),
				...dateRangeFields(),
			},
		},
		{
			...api,
			route: "GET /api/customer/:id/transactions",
			changesState: false,
			input: "query",
			// No `absent`: another account's customer, or an unknown one, answers an empty list, not the empty 200 of a read by id.
			path: { id: { valid: w => String(w.customerId), type: "integer" } },
			fields: { ...listFields(), ...transactionFilters(), ...dateRangeFields() },
		},
		{
			...api,
			route: "GET /api/events",
			changesState: false,
			input: "query",
			fields: {
				...listFields(),
				after: {
					valid: w => w.eventId,
					type: "string",
					refused: w => ["00000000-0000-4000-8000-000000000000", `${w.eventId}x`, ...badCursors(w)],
				},
				type: { valid: () => "TRANSACTION", type: "string", refused: () => ["REFUNDED", "transaction", ""] },
				customerId: { valid: () => undefined, type: "integer", refused: () => [0, -1] },
			},
			// The event `after` names is not another customer's: with that customer's filter, it names no event of the list.
			special: w => [
				{ defect: "after an event of another customer", patch: d => void d.query.push(["customerId", String(w.otherCustomerId)]) },
			],
		},
		{
			...api,
			route: "GET /api/events/:id",
			changesState: false,
			input: "query",
			path: {
				id: {
					valid: w => w.eventId,
					type: "string",
					absent: () => ["00000000-0000-4000-8000-000000000000", "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF"],
					refused: [
						"not-a-uuid",
						"00000000-0000-4000-8000-00000000000g",
						"00000000000040008000000000000000",
						"{00000000-0000-4000-8000-000000000000}",
						"%7B%22%24gt%22%3A%22%22%7D",
						"..%2F..%2Fetc%2Fpasswd",
					],
				},
			},
		},
		{
			...api,
			route: "GET /api/refund/:id",
			changesState: true,
			input: "query",
			path: {
				id: {
					valid: w => String(w.transactionId),
					type: "integer",
					absent: w => [String(w.otherTransactionId), String(w.refundedTransactionId), "987654321"],
				},
			},
			fields: {
				amountToRefund: {
					valid: () => "1.00",
					type: "string",
					refused: () => ["abc", "-1", "0", "1e999", "99999", "9.999", "NaN", "Infinity", "１", "0x10", "1,00", " ", "<script>"],
				},
			},
			// Odd keys are still keys: sent with a refund that must be refused, they must leave nothing behind.
			special: (w, r) => {
				const keyed = (defect: string, key: string, change: (d: Draft) => void) => ({
					defect,
					patch: (d: Draft) => {
						change(d);
						d.headers["Idempotency-Key"] = key;
					},
				});
				return [
					keyed(
						"Idempotency-Key with a NoSQL operator, refunded transaction",
						'{"$gt":""}',
						d => void (d.path.id = String(w.refundedTransactionId)),
					),
					keyed("Idempotency-Key too long", randomString(r, 300), () => {}),
					keyed(
						"Idempotency-Key unicode, another account's transaction",
						"\u00e9\u00ff-key",
						d => void (d.path.id = String(w.otherTransactionId)),
					),
					keyed("Idempotency-Key, unknown transaction", `key-${randomString(r, 12)}`, d => void (d.path.id = "987654321")),
					keyed("Idempotency-Key, amount too high", `key-${randomString(r, 12)}`, d => void (d.query = [["amountToRefund", "99999"]])),
					keyed(
						"Idempotency-Key, invalid amount",
						`key-${randomString(r, 12)}`,
						d => void (d.query = [["amountToRefund", r.pick(["abc", "-1", "9.999"])]]),
					),
				];
			},
		},
		{
			...api,
			route: "GET /api/disputes",
			changesState: false,
			input: "query",
			fields: {
				...listFields(),
				status: { valid: () => "NEEDS_RESPONSE", type: "string", refused: () => ["OPEN", "needs_response", ""] },
				...dateRangeFields(),
			},
		},
		{ ...api, route: "GET /api/metrics", changesState: false, input: "query", fields: metricsFields() },
		{
			...api,
			route: "GET /api/disputes/:id",
			changesState: false,
			input: "query",
			path: { id: { valid: w => String(w.disputeId), type: "integer", absent: w => [String(w.otherDisputeId), "987654321"] } },
		},
		{
			...api,
			route: "POST /api/disputes/:id/evidence",
			changesState: true,
			input: "body",
			path: { id: { valid: w => String(w.disputeId), type: "integer", absent: w => [String(w.otherDisputeId), "987654321"] } },
			fields: {
				evidence: {
					valid: () => ({ uncategorized_text: "Delivered on time" }),
					type: "object",
					required: true,
					refused: () => [
						{},
						{ notes: "x" },
						{ uncategorized_text: 5 },
						{ uncategorized_text: "" },
						{ uncategorized_text: "x".repeat(20_001) },
						{ $where: "1" },
					],
				},
			},
		},
		{
			...api,
			route: "POST /api/unsubscribe/:customerId",
			changesState: true,
			input: "body",
			// Only ones it must answer "not found": the valid customer is never the target.
			path: { customerId: { valid: w => String(w.customerId), type: "integer", absent: w => [String(w.otherCustomerId), "987654321"] } },
			fields: {},
		},

		// A subscription's pause, resume and change (docs/subscriptions.md): the world's customer is the target only of
		// requests with one defect each, which are refused; a well-formed one names another account's or no customer.
		{
			...api,
			route: "POST /api/customer/:id/pause",
			changesState: true,
			input: "body",
			path: { id: { valid: w => String(w.customerId), type: "integer", absent: w => [String(w.otherCustomerId), "987654321"] } },
			fields: {
				resumeAt: {
					valid: () => new Date(Date.now() + 30 * 86_400_000).toISOString(),
					type: "string",
					refused: () => ["tomorrow", "2020-01-01T00:00:00Z", "2999-01-01T00:00:00Z", "", "2026-13-01T00:00:00Z"],
				},
			},
		},
		// A cancellation at the period's end (docs/subscriptions.md#cancel-at-the-periods-end), and the customer portal's link.
		{
			...api,
			route: "POST /api/customer/:id/cancel-at-period-end",
			changesState: true,
			input: "body",
			path: { id: { valid: w => String(w.customerId), type: "integer", absent: w => [String(w.otherCustomerId), "987654321"] } },
			fields: {
				reason: { valid: () => "too_expensive", type: "string", refused: () => ["", "x".repeat(101)] },
				comment: { valid: () => "Found a cheaper plan", type: "string", refused: () => ["x".repeat(1001)] },
			},
		},
		{
			...api,
			route: "DELETE /api/customer/:id/cancel-at-period-end",
			changesState: true,
			input: "none",
			path: { id: { valid: w => String(w.customerId), type: "integer", absent: w => [String(w.otherCustomerId), "987654321"] } },
		},
		{
			...api,
			route: "POST /api/customer/:id/portal-session",
			changesState: true,
			input: "body",
			path: { id: { valid: w => String(w.customerId), type: "integer", absent: w => [String(w.otherCustomerId), "987654321"] } },
			fields: {
				returnUrl: {
					valid: () => "https://shop.example.com/account",
					type: "string",
					refused: () => ["javascript:alert(1)", "https://evil.example/", ""],
				},
				locale: { valid: () => "de", type: "string", refused: () => ["fr", "DE", ""] },
			},
		},
		{
			...api,
			route: "POST /api/customer/:id/resume",
			changesState: true,
			input: "body",
			path: { id: { valid: w => String(w.customerId), type: "integer", absent: w => [String(w.otherCustomerId), "987654321"] } },
			fields: {},
		},
		...(["change-quote", "change"] as const).map(
			(action): EndpointSpec => ({
				...api,
				route: `POST /api/customer/:id/${action}`,
				changesState: true,
				input: "body",
				path: { id: { valid: w => String(w.customerId), type: "integer", absent: w => [String(w.otherCustomerId), "987654321"] } },
				fields: {
					productId: { valid: w => w.productId, type: "integer", refused: w => [0, -1, 1.5, w.otherProductId] },
					quantity: { valid: () => 2, type: "integer", refused: () => [0, -1, 10_001, 1.5] },
					mode: {
						valid: () => "now_prorated",
						type: "string",
						required: true,
						refused: () => ["NOW_PRORATED", "later", "", "now"],
					},
					...(action === "change"
						? { quoteId: { valid: () => `q_${"0".repeat(32)}`, type: "string", refused: () => ["q_1", "", `Q_${"0".repeat(32)}`] } }
						: {}),
				},
			}),
		),
		...["DELETE /api/customer/:id/pending-change", "POST /api/customer/:id/credit-refund"].map(
			(route): EndpointSpec => ({
				...api,
				route,
				changesState: true,
				input: "none",
				path: { id: { valid: w => String(w.customerId), type: "integer", absent: w => [String(w.otherCustomerId), "987654321"] } },
			}),
		),

		// Usage billing (docs/usage.md): a batch is refused whole only for its own shape (an event alone is answered in
		// the results), so its defects are the batch's; its valid event names another account's customer.
		{
			...api,
			route: "POST /api/usage",
			changesState: true,
			input: "body",
			fields: {
				events: {
					valid: w => [{ id: "fuzz-1", customerId: w.otherCustomerId, meter: "calls", timestamp: new Date().toISOString() }],
					type: "array",
					required: true,
					refused: () => [[], "events", {}, Array.from({ length: 1001 }, (_, i) => ({ id: `f-${i}` }))],
				},
			},
		},
		{
			...api,
			route: "GET /api/customer/:id/usage",
			changesState: false,
			input: "query",
			path: { id: { valid: w => String(w.customerId), type: "integer", absent: w => [String(w.otherCustomerId), "987654321"] } },
			fields: {},
		},
		{
			...api,
			route: "GET /api/customer/:id/usage-events",
			changesState: false,
			input: "query",
			path: { id: { valid: w => String(w.customerId), type: "integer", absent: w => [String(w.otherCustomerId), "987654321"] } },
			fields: listFields(),
		},

		// A customer's coupon (docs/coupons.md).
		{
			...api,
			route: "POST /api/customer/:id/coupon",
			changesState: true,
			input: "body",
			path: { id: { valid: w => String(w.customerId), type: "integer", absent: w => [String(w.otherCustomerId), "987654321"] } },
			fields: {
				promotionCode: { valid: () => "NO-SUCH-CODE", type: "string", refused: () => ["", "4242424242424242"] },
			},
		},
		{
			...api,
			route: "DELETE /api/customer/:id/coupon",
			changesState: true,
			input: "none",
			path: { id: { valid: w => String(w.customerId), type: "integer", absent: w => [String(w.otherCustomerId), "987654321"] } },
		},
		// Invoices and credit notes (docs/invoices.md): an invoice's id is its charge's.
		...["GET /api/invoices", "GET /api/credit-notes"].map(
			(route): EndpointSpec => ({
				...api,
				route,
				changesState: false,
				input: "query",
				fields: {
					...listFields(),
					customerId: { valid: w => w.customerId, type: "integer", refused: () => [0, -1] },
					...dateRangeFields(),
				},
			}),
		),
		...["GET /api/invoice/:id", "GET /api/invoice/:id/pdf", "GET /api/credit-note/:id", "GET /api/credit-note/:id/pdf"].map(
			(route): EndpointSpec => ({
				...api,
				route,
				changesState: false,
				input: "query",
				path: { id: { valid: w => String(w.transactionId), type: "integer", absent: w => [String(w.otherTransactionId), "987654321"] } },
			}),
		),
		...[
			"GET /api/buyer/invoices/:id/:signature",
			"GET /api/buyer/invoices/:id/:signature/pdf",
			"GET /api/buyer/credit-notes/:id/:signature",
			"GET /api/buyer/credit-notes/:id/:signature/pdf",
		].map(
			(route): EndpointSpec => ({
				...publicApi,
				route,
				changesState: false,
				input: "query",
				path: {
					id: { valid: w => String(w.transactionId), type: "integer" },
					// A signature that is not the document's: the link finds nothing.
					signature: { valid: () => "A".repeat(43), type: "string" },
				},
			}),
		),

		// /api, no token
		{ ...publicApi, route: "GET /api/openapi.json", changesState: false, input: "query", strict: false },
		{ ...publicApi, route: "GET /api/checkout/key", changesState: false, input: "query" },
		{
			...publicApi,
			route: "POST /api/card-update",
			changesState: true,
			input: "body",
			fields: {
				// A checkout session: the answer is SESSION_NOT_FOUND, so a valid-looking request changes nothing either.
				sessionId: { valid: w => w.sessionId, type: "string", required: true, refused: () => ["not-a-uuid", ""] },
				landingDomain: { valid: w => w.domain, type: "string", required: true, refused: () => ["", "x".repeat(254)] },
				encryptedCardNumber: { valid: w => w.encryptedCard, type: "string", required: true },
				encryptedCvc: { valid: w => w.encryptedCvc, type: "string", required: true },
				cardExpiry: { valid: () => "1234", type: "string", required: true, refused: () => ["13/34", "1334", "ab34"] },
			},
		},
		{
			...publicApi,
			route: "POST /api/checkout/continue",
			changesState: true,
			input: "body",
			fields: {
				// A session with no payment in progress: SESSION_NOT_FOUND, so a valid-looking request changes nothing either.
				sessionId: { valid: w => w.sessionId, type: "string", required: true, refused: () => ["not-a-uuid", ""] },
				landingDomain: { valid: w => w.domain, type: "string", required: true, refused: () => ["", "x".repeat(254)] },
			},
		},
		{
			...publicApi,
			route: "POST /api/card-update/continue",
			changesState: true,
			input: "body",
			fields: {
				// A checkout session, no card update's: SESSION_NOT_FOUND, so a valid-looking request changes nothing either.
				sessionId: { valid: w => w.sessionId, type: "string", required: true, refused: () => ["not-a-uuid", ""] },
				landingDomain: { valid: w => w.domain, type: "string", required: true, refused: () => ["", "x".repeat(254)] },
			},
		},
		{
			...publicApi,
			route: "POST /api/sandbox/challenges/:challengeId",
			changesState: true,
			input: "body",
			// A well-formed id no checkout asked for: {accepted: false}, so a valid-looking request changes nothing either.
			path: { challengeId: { valid: () => `sbx3ds_${"0".repeat(32)}`, type: "string" } },
			fields: { result: { valid: () => "complete", type: "string", required: true, refused: () => ["completed", "", "COMPLETE"] } },
		},
		{
			...publicApi,
			route: "POST /api/card-update-link",
			changesState: true,
			input: "body",
			fields: {
				// A token of the right form that no link has: the answer is 404, so a valid-looking request changes nothing either.
				token: {
					valid: () => "A".repeat(43),
					type: "string",
					required: true,
					refused: () => ["A".repeat(42), "A".repeat(44), "", `${"A".repeat(42)}=`, "../../etc/passwd", `${"A".repeat(42)}\n`],
				},
			},
		},
		{
			...publicApi,
			route: "POST /api/checkout",
			changesState: true,
			input: "body",
			fields: {
				sessionId: {
					valid: w => w.sessionId,
					type: "string",
					required: true,
					refused: w => [
						w.otherSessionId.replace(/.$/, c => (c === "0" ? "1" : "0")),
						"00000000-0000-0000-0000-000000000000",
						"not-a-uuid",
						`${w.sessionId} `,
					],
				},
				productId: { valid: w => w.productId, type: "integer", required: true, refused: w => [w.otherProductId, 987654321, 0, -1, 1.5] },
				email: {
					valid: () => "fuzz@example.com",
					type: "string",
					required: true,
					refused: () => ["not-an-email", "@", "a@", `${"a".repeat(250)}@example.com`],
				},
				name: {
					valid: () => "Ada",
					type: "string",
					required: true,
					refused: () => ["4242 4242 4242 4242", "Ada 5555555555554444", "", "x".repeat(201)],
				},
				lastName: { valid: () => "Lovelace", type: "string", refused: () => ["378282246310005", "x".repeat(201)] },
				landingDomain: {
					valid: w => w.domain,
					type: "string",
					required: true,
					refused: () => ["evil.example", "shop.example.com.evil.com", "ѕhop.example.com", "shop.example.com.", "", "x".repeat(254)],
				},
				additionalData: {
					valid: () => ({ orderRef: "A-1" }),
					type: "object",
					refused: () => [
						"a string",
						1,
						[1, 2],
						Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])),
						deep(6),
						deep(400),
						{ $where: "1" },
						{ nested: { $gt: "" } },
						{ "a.b": 1 },
						{ "\u0000": 1 },
						{ "": 1 },
						{ ["k".repeat(101)]: 1 },
						{ cvc: "123" },
						{ card: { CVV2: 1 } },
						{ note: "card 4242 4242 4242 4242" },
						{ list: [1, "5555-5555-5555-4444"] },
						{ pad: "x".repeat(17_000) },
					],
				},
				encryptedCardNumber: { valid: w => w.encryptedCard, type: "string", required: true },
				encryptedCvc: { valid: w => w.encryptedCvc, type: "string", required: true },
				cardExpiry: {
					valid: () => "1234",
					type: "string",
					required: true,
					refused: () => ["13/34", "1334", "0034", "12/34", "123", "12345", "ab34"],
				},
			},
			special: (w, r) => [
				{ defect: "garbage JWE card number", patch: d => void (d.body!.encryptedCardNumber = garbageJwe(w, r)) },
				{ defect: "garbage JWE CVC", patch: d => void (d.body!.encryptedCvc = garbageJwe(w, r)) },
				{
					defect: "garbage JWE both",
					patch: d => void Object.assign(d.body!, { encryptedCardNumber: garbageJwe(w, r), encryptedCvc: garbageJwe(w, r) }),
				},
				{
					defect: "JWEs swapped",
					patch: d => void Object.assign(d.body!, { encryptedCardNumber: w.encryptedCvc, encryptedCvc: w.encryptedCard }),
				},
				{ defect: "plaintext card fields", patch: d => void Object.assign(d.body!, { cardNumber: "4242424242424242", cvc: "123" }) },
			],
		},

		// /demo, no token: there is no demo account in this app, so it always refuses.
		{ auth: "none", route: "GET /demo/session", changesState: true, input: "query", strict: true, versioned: false },

		// /admin, admin token
		{
			...admin,
			route: "POST /admin/accounts",
			changesState: true,
			input: "body",
			fields: {
				name: text("Fuzz shop"),
				environment: { valid: () => "sandbox", type: "string", required: true, refused: () => ["staging", "SANDBOX", "", "prod"] },
				webhookUrl: {
					valid: () => null,
					type: "nullable-string",
					refused: () => ["ftp://example.com/x", "javascript:alert(1)", "not a url", "file:///etc/passwd", "http://", "x".repeat(2100)],
				},
			},
		},
		{ ...admin, route: "GET /admin/accounts", changesState: false, input: "query" },
		{ ...admin, route: "GET /admin/accounts/:accountId", changesState: false, input: "query", path: accountPath({ absentRejected: true }) },
		{
			...admin,
			route: "PATCH /admin/accounts/:accountId",
			changesState: true,
			input: "body",
			path: accountPath({ absentRejected: true }),
			fields: {
				webhookUrl: {
					valid: () => "http://127.0.0.1:9/elsewhere",
					type: "nullable-string",
					refused: () => ["ftp://example.com/x", "javascript:alert(1)", "gopher://127.0.0.1:6379/_FLUSHALL", "not a url", "x".repeat(2100)],
				},
				environment: { valid: () => "sandbox", type: "string", refused: () => ["staging", "", "SANDBOX"] },
			},
		},
		{
			...admin,
			route: "POST /admin/accounts/:accountId/tokens",
			changesState: true,
			input: "body",
			path: accountPath({ absentRejected: true }),
			fields: { graceSeconds: { valid: () => 60, type: "integer", refused: () => [-1, 1e12, 30 * 24 * 3600 + 1, 1.5, "soon"] } },
		},
		{
			...admin,
			route: "POST /admin/accounts/:accountId/merchant-accounts",
			changesState: true,
			input: "body",
			path: accountPath({ absentRejected: true }),
			fields: {
				name: text("MID fuzz"),
				group: text("default"),
				cardTypes: {
					valid: () => ["visa"],
					type: "array",
					required: true,
					refused: () => [
						"visa",
						[],
						["visa", "amexx"],
						["visa", "visa", "visa", "visa", "visa", "visa", "visa", "visa", "visa"],
						[{ $gt: "" }],
					],
				},
				active: { valid: () => true, type: "boolean", refused: () => ["maybe", "yes", 2] },
				processor: midProcessor,
			},
		},
		{
			...admin,
			route: "PATCH /admin/accounts/:accountId/merchant-accounts/:id",
			changesState: true,
			input: "body",
			path: {
				accountId: { valid: w => String(w.accountId), type: "integer", absent: () => ["987654321"] },
				id: { valid: w => String(w.midId), type: "integer", absent: () => ["987654321"] },
			},
			fields: {
				name: text("MID A", false),
				active: { valid: () => true, type: "boolean", refused: () => ["maybe", "yes", 2] },
				processor: midProcessor,
			},
		},
		{
			...admin,
			route: "GET /admin/accounts/:accountId/merchant-accounts",
			changesState: false,
			input: "query",
			path: accountPath({ absentRejected: false }),
			fields: { group: text("default", false) },
		},
		{
			...admin,
			route: "GET /admin/accounts/:accountId/merchant-account-health",
			changesState: false,
			input: "query",
			path: accountPath({ absentRejected: true }),
		},
		{
			...admin,
			route: "GET /admin/accounts/:accountId/metrics",
			changesState: false,
			input: "query",
			path: accountPath({ absentRejected: true }),
			fields: metricsFields(),
		},
		{
			...admin,
			route: "POST /admin/accounts/:accountId/products",
			changesState: true,
			input: "body",
			path: accountPath({ absentRejected: true }),
			fields: {
				name: text("Fuzz product"),
				amount: { valid: () => 9.99, type: "number", required: true, refused: () => [-1, 0, "abc", 9.999, Number.MAX_VALUE, "NaN"] },
				currency: { valid: () => "EUR", type: "string", required: true, refused: () => ["EU", "EURO", "123", "€€€", "XTS", ""] },
				billing: { valid: () => "CHARGE", type: "string", required: true, refused: () => ["FREE", "charge", ""] },
				trialDays: { valid: () => 0, type: "integer", refused: () => [-1, 366, 1.5, "a"] },
				renewal: {
					valid: () => ({ every: 1, unit: "month" }),
					type: "nullable-object",
					refused: () => [
						{ every: 0, unit: "month" },
						{ every: 1, unit: "fortnight" },
						{ every: 1 },
						{ every: 1, unit: "month", extra: 1 },
						"monthly",
					],
				},
				merchantAccountGroup: text("default"),
				authentication: { valid: () => "ALWAYS", type: "string", refused: () => ["always", "SOMETIMES", ""] },
			},
		},
		{
			...admin,
			route: "GET /admin/accounts/:accountId/products",
			changesState: false,
			input: "query",
			path: accountPath({ absentRejected: false }),
		},
		{
			...admin,
			route: "PATCH /admin/accounts/:accountId/products/:productId",
			changesState: true,
			input: "body",
			path: {
				accountId: { valid: w => String(w.accountId), type: "integer", absent: () => ["987654321"] },
				productId: { valid: w => String(w.productId), type: "integer", absent: w => [String(w.otherProductId), "987654321"] },
			},
			fields: {
				active: { valid: () => false, type: "boolean", refused: () => ["maybe", "yes", 2, {}] },
				billing: { valid: () => "CHARGE", type: "string", refused: () => ["FREE", "PREAUTHORIZE"] },
				authentication: { valid: () => "WHEN_REQUIRED", type: "string", refused: () => ["when_required", "NEVER"] },
			},
		},
		{
			...admin,
			route: "POST /admin/accounts/:accountId/bin-blacklist",
			changesState: true,
			input: "body",
			path: accountPath({ absentRejected: true }),
			fields: {
				bin: {
					valid: () => "555555",
					type: "string",
					required: true,
					refused: () => ["4111", "41111a", "4111111", "411111111", " 411111", "４１１１１１", ""],
				},
			},
		},
		{
			...admin,
			route: "GET /admin/accounts/:accountId/bin-blacklist",
			changesState: false,
			input: "query",
			path: accountPath({ absentRejected: false }),
		},
		{
			...admin,
			route: "DELETE /admin/accounts/:accountId/bin-blacklist/:bin",
			changesState: true,
			input: "query",
			path: {
				accountId: { valid: w => String(w.accountId), type: "integer", absent: w => [String(w.otherAccountId), "987654321"] },
				bin: {
					valid: w => w.blockedBin,
					type: "string",
					absent: () => ["999999", "12345678"],
					refused: ["4111", "abcdef", "4111111", "%7B%22%24gt%22%3A%22%22%7D"],
				},
			},
		},
		{
			...admin,
			route: "POST /admin/accounts/:accountId/blocked-buyers",
			changesState: true,
			input: "body",
			path: accountPath({ absentRejected: true }),
			fields: {
				email: {
					valid: () => "fraud@fuzz-shop.example.com",
					type: "string",
					required: true,
					// No card number, alone or inside an address, is ever taken here.
					refused: () => ["4242424242424242", "4242424242424242@example.com", "4242-4242-4242-4242@example.com", "not-an-email", ""],
				},
			},
		},
		// Meters (docs/usage.md#meters).
		{
			...admin,
			route: "POST /admin/accounts/:accountId/meters",
			changesState: true,
			input: "body",
			path: accountPath({ absentRejected: true }),
			fields: {
				code: { valid: () => "fuzz-meter", type: "string", required: true, refused: () => ["", "Has Space", "UPPER", "x".repeat(65)] },
				name: { valid: () => "Fuzz meter", type: "string", required: true, refused: () => ["", "x".repeat(201)] },
				aggregation: { valid: () => "sum", type: "string", required: true, refused: () => ["avg", "SUM", ""] },
				property: { valid: () => "tokens", type: "string", refused: () => ["", "x".repeat(101)] },
			},
		},
		{
			...admin,
			route: "GET /admin/accounts/:accountId/meters",
			changesState: false,
			input: "query",
			path: accountPath({ absentRejected: true }),
		},
		// Coupons (docs/coupons.md).
		{
			...admin,
			route: "POST /admin/accounts/:accountId/coupons",
			changesState: true,
			input: "body",
			path: accountPath({ absentRejected: true }),
			fields: {
				code: {
					valid: () => "FUZZ10",
					type: "string",
					required: true,
					// No card number is ever stored as a code.
					refused: () => ["4242424242424242", "ab", "", "has space"],
				},
				percentOff: { valid: () => 10, type: "integer", refused: () => [0, 101, 10.5] },
				duration: { valid: () => "once", type: "string", required: true, refused: () => ["ONCE", "always", ""] },
				maxRedemptions: { valid: () => 5, type: "integer", refused: () => [0, -1] },
				redeemBy: { valid: () => new Date(Date.now() + 86_400_000).toISOString(), type: "string", refused: () => ["tomorrow", ""] },
			},
		},
		{
			...admin,
			route: "GET /admin/accounts/:accountId/coupons",
			changesState: false,
			input: "query",
			path: accountPath({ absentRejected: true }),
		},
		{
			...admin,
			route: "POST /admin/accounts/:accountId/coupons/:couponId/deactivate",
			changesState: true,
			input: "none",
			path: {
				...accountPath({ absentRejected: true }),
				couponId: { valid: () => "987654321", type: "integer", absent: () => ["987654322"] },
			},
		},
		// A customer's emails (docs/emails.md).
		{
			...admin,
			route: "GET /admin/accounts/:accountId/customers/:customerId/emails",
			changesState: false,
			input: "query",
			path: { ...accountPath({ absentRejected: true }), customerId: { valid: w => String(w.customerId), type: "integer" } },
		},
		{
			...admin,
			route: "GET /admin/accounts/:accountId/blocked-buyers",
			changesState: false,
			input: "query",
			path: accountPath({ absentRejected: true }),
		},
		{
			...admin,
			route: "DELETE /admin/accounts/:accountId/blocked-buyers/:kind/:value",
			changesState: true,
			input: "query",
			path: {
				accountId: { valid: w => String(w.accountId), type: "integer", absent: w => [String(w.otherAccountId), "987654321"] },
				kind: { valid: () => "email", type: "string", refused: ["EMAIL", "ip", "cards"] },
				value: { valid: w => w.blockedEmail, type: "string", absent: () => ["nobody@fuzz-shop.example.com", "ab".repeat(32)] },
			},
		},
		{
			...admin,
			route: "GET /admin/accounts/:accountId/customers",
			changesState: false,
			input: "query",
			path: accountPath({ absentRejected: false }),
			fields: { email: text("fuzz@example.com", false) },
		},
		{
			...admin,
			route: "GET /admin/accounts/:accountId/customers/:customerId/transactions",
			changesState: false,
			input: "query",
			path: {
				accountId: { valid: w => String(w.accountId), type: "integer" },
				customerId: { valid: w => String(w.customerId), type: "integer" },
			},
		},
		{
			...admin,
			route: "GET /admin/accounts/:accountId/recovery",
			changesState: false,
			input: "query",
			path: { accountId: { valid: w => String(w.accountId), type: "integer" } },
		},
		{
			...admin,
			route: "POST /admin/accounts/:accountId/dashboard-users",
			changesState: true,
			input: "body",
			path: accountPath({ absentRejected: true }),
			fields: { email: dashboardEmail(), ...dashboardUserFields({ roleRequired: true }) },
		},
		{
			...admin,
			route: "GET /admin/accounts/:accountId/dashboard-users",
			changesState: false,
			input: "query",
			path: accountPath({ absentRejected: true }),
		},
		{
			...admin,
			route: "PATCH /admin/accounts/:accountId/dashboard-users/:userId",
			changesState: true,
			input: "body",
			path: {
				// The user under another account, or an unknown one: not found either way.
				accountId: { valid: w => String(w.accountId), type: "integer", absent: w => [String(w.otherAccountId), "987654321"] },
				userId: { valid: w => String(w.dashboardUserId), type: "integer", absent: w => [String(w.otherDashboardUserId), "987654321"] },
			},
			fields: {
				disabled: { valid: () => true, type: "boolean", refused: () => ["maybe", "yes", 2, {}, "true"] },
				...dashboardUserFields({ roleRequired: false }),
			},
		},
		{
			...admin,
			route: "GET /admin/sandbox/operations",
			changesState: false,
			input: "query",
			fields: {
				cardBin: text("424242", false),
				kind: { valid: () => "charge", type: "string", refused: () => ["steal", ""] },
				status: { valid: () => "APPROVED", type: "string", refused: () => ["ERROR", ""] },
				midId: { valid: w => w.midId, type: "integer" },
			},
		},
		{
			...admin,
			route: "GET /admin/accounts/:accountId/webhooks",
			changesState: false,
			input: "query",
			path: accountPath({ absentRejected: false }),
			fields: {
				status: { valid: () => "FAILED", type: "string", refused: () => ["LOST", ""] },
				limit: { valid: () => 10, type: "integer", refused: () => [0, 1001, -1] },
			},
		},
		{
			...admin,
			route: "POST /admin/accounts/:accountId/webhooks/redeliver",
			// Every delivery of the account was delivered, so even an accepted request redelivers nothing.
			changesState: true,
			input: "body",
			path: accountPath({ absentRejected: false }),
			fields: {},
		},
		{
			...admin,
			route: "POST /admin/webhooks/:eventId/redeliver",
			changesState: true,
			input: "body",
			path: {
				eventId: {
					valid: w => w.eventId,
					type: "string",
					absent: () => ["00000000-0000-4000-8000-000000000000"],
					refused: ["not-a-uuid", "%7B%22%24gt%22%3A%22%22%7D", "..%2F..%2Fetc%2Fpasswd"],
				},
			},
			fields: {},
		},
		{
			...admin,
			route: "POST /admin/renewals/run",
			changesState: true,
			input: "body",
			fields: { at: { valid: futureIso, type: "string", refused: () => ["yesterday", "2026-13-45T99:99:99Z", "", "now"] } },
		},
		{
			...admin,
			route: "POST /admin/accounts/:accountId/clock",
			changesState: true,
			input: "body",
			path: accountPath({ absentRejected: true }),
			fields: {
				advanceTo: {
					valid: futureIso,
					type: "string",
					required: true,
					refused: () => ["2000-01-01T00:00:00Z", "tomorrow", "", "2026-02-30T00:00:00"],
				},
			},
		},

		// The health check and the static files: reads with no parameters.
		{ auth: "none", route: "GET /actuator/health", changesState: false, input: "none", strict: false, versioned: false },
		{ auth: "none", route: "HEAD /actuator/health", changesState: false, input: "none", strict: false, versioned: false },
		{ auth: "none", route: "GET /sdk/checkout.js", changesState: false, input: "none", strict: false, versioned: false },
		{ auth: "none", route: "GET /checkout/frame.html", changesState: false, input: "none", strict: false, versioned: false },
		{ auth: "none", route: "GET /checkout/frame.js", changesState: false, input: "none", strict: false, versioned: false },
		{ auth: "none", route: "GET /demo/", changesState: false, input: "none", strict: false, versioned: false },
		{ auth: "none", route: "GET /vendor/jose/index.js", changesState: false, input: "none", strict: false, versioned: false },
		{ auth: "none", route: "GET /vendor/chart.js/chart.umd.min.js", changesState: false, input: "none", strict: false, versioned: false },
	];
}

// --- Building requests --------------------------------------------------------

function baseDraft(spec: EndpointSpec, w: World): Draft {
	const [method] = spec.route.split(" ");
	const draft: Draft = {
		method,
		path: Object.fromEntries(Object.entries(spec.path ?? {}).map(([name, p]) => [name, percentEncode(p.valid(w))])),
		query: [],
		rawQuery: [],
		body: undefined,
		contentType: null,
		headers: {},
	};
	if (spec.auth === "api") draft.headers.Authorization = `Bearer ${w.apiToken}`;
	if (spec.auth === "admin") draft.headers.Authorization = `Bearer ${w.adminToken}`;
	if (spec.route === "GET /checkout/frame.html")
		draft.query = [
			["sessionId", w.sessionId],
			["productId", String(w.productId)],
			["domain", w.domain],
		];
	const fields = Object.entries(spec.fields ?? {}).map(([name, f]) => [name, f.valid(w)] as const);
	if (spec.input === "query") draft.query = fields.filter(([, v]) => v !== undefined).map(([name, v]) => [name, String(v)]);
	if (spec.input === "body") {
		draft.body = Object.fromEntries(fields);
		draft.contentType = "application/json";
	}
	return draft;
}

/** Percent-encodes the UTF-8 bytes (a lone surrogate too, which encodeURIComponent refuses). */
export function percentEncode(text: string): string {
	return [...Buffer.from(text, "utf8")]
		.map(b =>
			/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, "0")}`,
		)
		.join("");
}

function encodeQuery(query: [string, string][]): string[] {
	return query.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`);
}

export function render(spec: EndpointSpec, draft: Draft, defect: string): Omit<FuzzRequest, "mustRefuse"> {
	const template = spec.route.split(" ")[1];
	const path = draft.rawPath ?? template.replace(/:([A-Za-z]+)/g, (_, name) => draft.path[name]);
	const query = [...encodeQuery(draft.query), ...draft.rawQuery];
	const headers: Record<string, string> = { ...draft.headers };
	let body: string | Buffer | undefined = draft.rawBody;
	if (body === undefined && draft.body !== undefined) body = JSON.stringify(draft.body);
	if (draft.contentType) headers["Content-Type"] = draft.contentType;
	return { route: spec.route, defect, method: draft.method, path: query.length ? `${path}?${query.join("&")}` : path, headers, body };
}

/** A value of the wrong type for a field of `type`; never one Ajv would coerce to a right one. */
function wrongType(type: FieldSpec["type"], r: Random): Value {
	const objects: Value[] = [r.pick(OPERATORS), { a: 1 }, [], ["x"], deep(r.int(10, 200))];
	switch (type) {
		case "string":
		case "nullable-string":
			return r.pick(objects);
		case "integer":
			return r.pick([...objects, r.pick(NOT_INTEGERS.filter(v => !/^\d+$/.test(v))), 1.5, "1.5", "abc"]);
		case "number":
			return r.pick([...objects, "abc", "NaN", ""]);
		case "boolean":
			return r.pick([...objects, "maybe", 2, "yes"]);
		case "object":
		case "nullable-object":
			return r.pick(["a string", 12, ["array"], true]);
		case "array":
			return r.pick(["visa", 12, { a: 1 }, true]);
		case "any":
			return r.pick(objects);
	}
}

/**
 * A JSON value of another type that a coercing validator would have turned
 * into a right one (`"12"` or `true` for an integer, `123` for a string, `null`
 * for anything not documented as nullable): refused, since bodies keep their JSON type.
 */
function coercibleWrongType(type: FieldSpec["type"], r: Random): Value {
	switch (type) {
		case "string":
			return r.pick([123, 0, true, false, null]);
		case "nullable-string":
			return r.pick([123, 0, true, false]);
		case "integer":
			return r.pick(["12", "0", true, false, null, ""]);
		case "number":
			return r.pick(["9.99", "1", true, null]);
		case "boolean":
			return r.pick(["true", "false", 1, 0, null, ""]);
		case "object":
		case "array":
			return r.pick([null, ""]);
		case "nullable-object":
			return r.pick(["", 0, false]);
		case "any":
			return r.pick([null, 1, true]);
	}
}

/** Methods no route takes, sent to a route: none may run its handler. */
const OTHER_METHODS = ["PUT", "TRACE", "QUERY", "OPTIONS"];
const OVERRIDE_HEADERS = ["X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override"];

type Defect = { defect: string; apply: (d: Draft) => void; exploratory?: boolean };

/** Every defect the endpoint must refuse; the generator picks one per request. */
function defectsFor(spec: EndpointSpec, w: World, r: Random): Defect[] {
	const defects: Defect[] = [];
	const fields = Object.entries(spec.fields ?? {});
	const queryInput = spec.input === "query";

	if (spec.auth !== "none") {
		const [label, value] = r.pick(BAD_TOKENS(r));
		defects.push({
			defect: `auth: ${label}`,
			apply: d => {
				if (value === undefined) delete d.headers.Authorization;
				else d.headers.Authorization = value;
			},
		});
		if (spec.auth === "api")
			defects.push({ defect: "auth: the admin token on /api", apply: d => void (d.headers.Authorization = `Bearer ${w.adminToken}`) });
		if (spec.auth === "admin")
			defects.push({ defect: "auth: an API token on /admin", apply: d => void (d.headers.Authorization = `Bearer ${w.apiToken}`) });
	}
	if (spec.versioned) {
		const version = r.pick(["2.0", "1", "0.9", "latest", "1.0.0", "", "1.0, 2.0", '{"$gt":""}', "\u00e91.0"]);
		defects.push({ defect: `X-API-Version ${JSON.stringify(version)}`, apply: d => void (d.headers["X-API-Version"] = version) });
	}

	for (const [name, param] of Object.entries(spec.path ?? {})) {
		const generic = param.type === "integer" ? NOT_INTEGERS : [];
		const malformed = [...generic, ...(param.refused ?? []), ...OPERATOR_STRINGS, ...TRAVERSALS, ...UNICODE.slice(0, 6)];
		const bad = r.pick(malformed);
		const encoded = /%[0-9A-Fa-f]{2}/.test(bad) || bad === ".." ? bad : percentEncode(bad);
		defects.push({ defect: `path ${name}=${JSON.stringify(bad)}`, apply: d => void (d.path[name] = encoded) });
		if (param.absent) {
			const absent = r.pick(param.absent(w));
			defects.push({ defect: `path ${name}=${absent} (not the caller's)`, apply: d => void (d.path[name] = absent) });
		}
		// An empty segment leaves a path no route has.
		defects.push({ defect: `path ${name} empty`, apply: d => void (d.path[name] = "") });
	}

	if (spec.strict && spec.input !== "none") {
		const extra = r.pick([
			"foo",
			"accountId",
			"admin",
			"$where",
			"__proto__",
			"constructor",
			"toString",
			"hasOwnProperty",
			"isAdmin",
			"status",
			"id",
			"idempotencyKey",
			"host",
			"../x",
			"é",
			"",
		]);
		const extraValue: Value = r.pick([1, "x", { $gt: "" }, true, null]);
		if (queryInput) {
			// accountId in an /api query is overwritten by the token's account; it must still be refused as unknown.
			defects.push({ defect: `unknown query parameter ${extra}`, apply: d => void d.query.push([extra, String(extraValue)]) });
		} else {
			defects.push({ defect: `unknown body field ${extra}`, apply: d => void (d.body = { ...d.body, [extra]: extraValue }) });
		}
		defects.push({
			defect: "__proto__ in the body",
			apply: d => {
				d.contentType = "application/json";
				const body = JSON.stringify(d.body ?? {});
				const field = fields.find(([, f]) => f.required)?.[0] ?? "accountId";
				d.rawBody = body.replace(/^\{/, `{"__proto__":{"${field}":${JSON.stringify(r.pick([1, "x", { $gt: "" }]))}},`).replace(/,\}$/, "}");
			},
		});
	}

	for (const [name, field] of fields) {
		const values: [string, Value][] = [
			["wrong type", wrongType(field.type, r)],
			// In a query every value is text, so only a body can send another JSON type.
			...(spec.input === "body" ? ([["coercible wrong type", coercibleWrongType(field.type, r)]] as [string, Value][]) : []),
			...(field.refused ? ([["refused value", r.pick(field.refused(w))]] as [string, Value][]) : []),
		];
		if (queryInput && field.valid(w) !== undefined) {
			const twice = String(field.valid(w));
			defects.push({ defect: `${name} given twice`, apply: d => void d.rawQuery.push(`${percentEncode(name)}=${percentEncode(twice)}`) });
		}
		for (const [kind, value] of values) {
			if (queryInput) {
				// In a query: a string, or the operator and array forms qs turns into objects.
				defects.push({
					defect: `${kind} ${name}=${JSON.stringify(value)}`.slice(0, 200),
					apply: d => {
						d.query = d.query.filter(([k]) => k !== name);
						if (typeof value === "string" || typeof value === "number") d.query.push([name, String(value)]);
						else
							d.rawQuery.push(
								r.pick([`${name}[$gt]=`, `${name}[$ne]=x`, `${name}[]=a&${name}[]=b`, `${name}[a][b][c][d][e][f]=1`, `${name}[$where]=1`]),
							);
					},
				});
			} else if (spec.input === "body") {
				defects.push({ defect: `${kind} ${name}=${JSON.stringify(value)}`.slice(0, 200), apply: d => void (d.body![name] = value) });
			}
		}
		if (field.required) {
			defects.push({
				defect: `missing ${name}`,
				apply: d => {
					if (queryInput) d.query = d.query.filter(([k]) => k !== name);
					else if (d.body) delete d.body[name];
				},
			});
		}
	}

	if (spec.input === "body") {
		const shapes: [string, () => string][] = [
			["a JSON array", () => "[1,2,3]"],
			["a JSON string", () => '"hello"'],
			["JSON null", () => "null"],
			["a JSON number", () => "42"],
			["invalid JSON", () => '{"a":'],
			["invalid JSON (single quotes)", () => "{'a': 1}"],
			["invalid JSON (trailing comma)", () => '{"a": 1,}'],
			["invalid JSON (NaN)", () => '{"a": NaN}'],
			["a deep array", () => deepArray(r.int(1000, 20_000))],
			["a deep object", () => deepJson(r.int(1000, 20_000))],
			["binary garbage", () => Buffer.from(Array.from({ length: 64 }, () => r.int(0, 255))).toString("latin1")],
			["a UTF-8 BOM then JSON", () => '\uFEFF{"a":1}'],
			["UTF-16 JSON", () => Buffer.from('{"a":1}', "utf16le").toString("latin1")],
		];
		const [label, raw] = r.pick(shapes);
		defects.push({
			defect: `body is ${label}`,
			apply: d => {
				d.contentType = "application/json";
				d.rawBody = raw();
			},
		});
		defects.push({ defect: "query parameters on a body endpoint", apply: d => void d.query.push(["x", r.pick(["1", "$gt", "../.."])]) });
		if (fields.some(([, f]) => f.required)) {
			const type = r.pick([
				"text/plain",
				"application/x-www-form-urlencoded",
				"multipart/form-data; boundary=x",
				"application/xml",
				"application/json; charset=utf-16",
				"application/json; charset=latin9",
				"application/vnd.api+json",
				"image/png",
				"",
			]);
			defects.push({ defect: `Content-Type ${JSON.stringify(type)}`, apply: d => void (d.contentType = type) });
			defects.push({ defect: "no Content-Type", apply: d => void (d.contentType = null) });
		}
	}
	if (spec.input !== "none") {
		const [label, encoding, body] = r.pick<[string, string, () => Buffer]>([
			["gzip that is not gzip", "gzip", () => Buffer.from('{"a":1}')],
			["a gzip bomb (50 MB inflated)", "gzip", gzipBomb],
			["a deflate bomb", "deflate", deflateBomb],
			["an unknown encoding", r.pick(["compress", "x-fuzz", "gzip, br, zstd", "identity;q=0"]), () => Buffer.from('{"a":1}')],
			["brotli garbage", "br", () => notBrotli(r)],
		]);
		defects.push({
			defect: `Content-Encoding: ${label}`,
			apply: d => {
				d.contentType = "application/json";
				d.headers["Content-Encoding"] = encoding;
				d.rawBody = body();
			},
		});
	}
	if (spec.input === "query" && spec.strict) {
		defects.push({
			defect: "a JSON body on a query endpoint",
			apply: d => {
				d.contentType = "application/json";
				d.rawBody = JSON.stringify(r.pick([{ a: 1 }, { $where: "1" }, [1], "x"]));
			},
		});
	}
	if (spec.input !== "none") {
		const size = r.int(110_000, 600_000);
		defects.push({
			defect: `a ${Math.round(size / 1000)} kB body`,
			apply: d => {
				d.contentType = "application/json";
				d.rawBody = JSON.stringify({ pad: "x".repeat(size) });
			},
		});
	}
	defects.push(...(spec.special?.(w, r) ?? []).map(s => ({ defect: s.defect, apply: s.patch })));

	// Another method, with the route's own one asked for as a preflight or through an override header: no handler may run.
	const [ownMethod] = spec.route.split(" ");
	const otherMethod = r.pick([...OTHER_METHODS, ...(spec.changesState && ownMethod === "GET" ? ["HEAD"] : [])]);
	defects.push({
		defect: `method ${otherMethod} instead of ${ownMethod}`,
		apply: d => {
			d.method = otherMethod;
			if (otherMethod === "OPTIONS" && r.chance(0.5))
				Object.assign(d.headers, { "Access-Control-Request-Method": ownMethod, Origin: "https://shop.example.com" });
			if (r.chance(0.5)) d.headers[r.pick(OVERRIDE_HEADERS)] = ownMethod;
		},
	});

	// Reads may answer these (a traversal or another method reaches another path, which may exist).
	if (!spec.changesState) {
		defects.push({ defect: "a traversal in the path", exploratory: true, apply: d => void (d.rawPath = traversalPath(spec, r)) });
		defects.push({
			defect: `method ${spec.route.split(" ")[0]} -> other`,
			exploratory: true,
			apply: d => void (d.method = r.pick(["PUT", "DELETE", "PATCH", "POST", "OPTIONS", "TRACE", "PROPFIND", "SEARCH"])),
		});
		defects.push({
			defect: "odd Range",
			exploratory: true,
			apply: d =>
				void (d.headers.Range = r.pick([
					"bytes=999999999-",
					"bytes=-1,-2,-3,-4,-5,-6,-7,-8,-9,-10,-11,-12,-13,-14,-15,-16,-17,-18,-19,-20",
					"bytes=5-1",
					"items=0-1",
					"bytes=0-0,".repeat(200),
				])),
		});
		defects.push({
			defect: "garbage conditional headers",
			exploratory: true,
			apply: d => Object.assign(d.headers, { "If-None-Match": '"*", W/"x"', "If-Modified-Since": "yesterday", "If-Range": "garbage" }),
		});
		// An empty path parameter can leave another route's path (GET /admin/accounts/ is the list).
		for (const defect of defects) if (defect.defect.endsWith(" empty")) defect.exploratory = true;
	}
	return defects;
}

function traversalPath(spec: EndpointSpec, r: Random): string {
	const template = spec.route.split(" ")[1];
	const prefix = template.split("/").slice(0, 2).join("/");
	return `${r.pick([prefix, `${prefix}/x`, "", "/checkout", "/sdk", "/vendor/jose", "/demo", "/public"])}/${r.pick(TRAVERSALS)}${r.pick(["", "/package.json", "/etc/passwd", "/.env", "/data/secrets.json", "/docs/openapi.json"])}`;
}

/** Harmless additions: the request stays as refused (or as answered) as it was. */
function addNoise(draft: Draft, r: Random): string[] {
	const added: string[] = [];
	const count = r.int(0, 2);
	const noises: [string, () => void][] = [
		[
			"unicode header",
			() => void (draft.headers["X-Fuzz"] = Buffer.from(r.pick(UNICODE.filter(u => !/[\r\n\0]/.test(u))), "utf8").toString("latin1")),
		],
		["long User-Agent", () => void (draft.headers["User-Agent"] = "x".repeat(r.int(100, 4000)))],
		["an Origin", () => void (draft.headers.Origin = r.pick(["https://evil.example", "null", "http://127.0.0.1", "file://"]))],
		["X-Forwarded-For", () => void (draft.headers["X-Forwarded-For"] = r.pick(["1.2.3.4", "127.0.0.1, 10.0.0.1", "::1", "garbage"]))],
		["odd Accept", () => void (draft.headers.Accept = r.pick(["*/*", "text/html", "application/xml;q=0.9, */*;q=0.1", "", "\u00e9"]))],
		["Accept-Encoding", () => void (draft.headers["Accept-Encoding"] = r.pick(["gzip, deflate, br", "identity;q=0", "*;q=0", "compress"]))],
		[
			"X-Request-ID",
			() =>
				void (draft.headers["X-Request-ID"] = r.pick([
					"../../etc/passwd",
					"x".repeat(2000),
					'{"$gt":""}',
					"\u00e9\u00ff",
					`sk_test_${randomString(r, 43)}`,
				])),
		],
		["Cookie", () => void (draft.headers.Cookie = "session=$gt; admin=true")],
		[
			"many headers",
			() => {
				for (let i = 0; i < r.int(50, 150); i++) draft.headers[`X-Many-${i}`] = randomString(r, 20);
			},
		],
	];
	for (const [label, apply] of r.sample(noises, count)) {
		apply();
		added.push(label);
	}
	return added;
}

/** One request for `spec`: its valid form with one defect and some noise. */
export function generate(spec: EndpointSpec, w: World, r: Random): FuzzRequest {
	const draft = baseDraft(spec, w);
	const defects = defectsFor(spec, w, r);
	const chosen = r.pick(defects);
	chosen.apply(draft);
	const noise = addNoise(draft, r);
	return {
		...render(spec, draft, noise.length ? `${chosen.defect} (+ ${noise.join(", ")})` : chosen.defect),
		mustRefuse: !chosen.exploratory,
	};
}

/** Requests no HTTP client sends: sent over a raw socket, answered by the HTTP server itself. */
export function malformedHttp(w: World, r: Random): FuzzRequest {
	const auth = `Authorization: Bearer ${w.apiToken}\r\n`;
	const cases: [string, () => string | Buffer][] = [
		[
			"headers larger than 16 kB",
			() => `GET /api/customer/1 HTTP/1.1\r\nHost: x\r\n${auth}X-Big: ${"a".repeat(r.int(17_000, 40_000))}\r\n\r\n`,
		],
		[
			"a request line larger than 16 kB",
			() => `GET /api/session?sessionId=${"a".repeat(r.int(17_000, 40_000))} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`,
		],
		["an unknown method", () => `${r.pick(["FOO", "get", "G ET", "GET\u0000"])} /api/session HTTP/1.1\r\nHost: x\r\n\r\n`],
		["a header without a colon", () => `GET /actuator/health HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n`],
		["a NUL in a header", () => `GET /actuator/health HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n`],
		["a bare LF", () => `GET /actuator/health HTTP/1.1\nHost: x\n\n`],
		[
			"Content-Length and Transfer-Encoding together",
			() =>
				`POST /api/checkout HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
		],
		[
			"two Content-Lengths",
			() => `POST /api/checkout HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n{}`,
		],
		["a negative Content-Length", () => `POST /api/checkout HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n`],
		[
			"broken chunked encoding",
			() =>
				`POST /api/checkout HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
		],
		// Node answers these as HTTP/1.1 (the health check is public), or refuses them: either is fine.
		["an unsupported HTTP version", () => `GET /actuator/health HTTP/${r.pick(["0.9", "2.0", "3.0", "1.2", "9.9"])}\r\nHost: x\r\n\r\n`],
		["an HTTP/2 preface", () => "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"],
		["garbage bytes", () => Buffer.from(Array.from({ length: r.int(10, 500) }, () => r.int(0, 255)))],
		["a space in the path", () => `GET /api/customer/1 2 HTTP/1.1\r\nHost: x\r\n${auth}\r\n`],
		[
			"raw unicode in the path",
			() =>
				Buffer.concat([Buffer.from("GET /api/customer/"), Buffer.from("é💳", "utf8"), Buffer.from(` HTTP/1.1\r\nHost: x\r\n${auth}\r\n`)]),
		],
		[
			"an absolute-form target",
			() => `GET http://evil.example${r.pick(["/api/session", "/sdk/checkout.js", "/../package.json"])} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`,
		],
		["a request for *", () => `OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n`],
		["a CONNECT", () => `CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n`],
	];
	const [label, build] = r.pick(cases);
	const mayAnswer = ["an unsupported HTTP version", "an absolute-form target"].includes(label);
	return {
		route: "malformed HTTP",
		defect: label,
		method: "RAW",
		path: "",
		headers: {},
		raw: Buffer.from(build() as never),
		mustRefuse: !mayAnswer,
	};
}
