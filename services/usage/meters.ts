// Meters (docs/usage.md#meters): what an account counts of its customers'
// events, made by an operator. A meter's aggregation and property never
// change once made: its aggregates would mean something else.
import type { MeterView, UsageActions } from "../../shared/contracts/usage";
import { ApiErrorType } from "../../shared/errors";
import { isDuplicateKey } from "../../shared/persistence";
import { formatDateTime } from "../../shared/time";
import type { UsageDeps } from "./deps";
import { UsageError } from "./errors";
import type { MeterDoc } from "./models";

export type MeterInput = UsageActions["usage.createMeter"]["params"];

export const meterKey = (accountId: number, code: string) => `${accountId}:${code}`;

export function toMeterView(doc: MeterDoc): MeterView {
	return {
		code: doc.code,
		name: doc.name,
		aggregation: doc.aggregation,
		property: doc.property,
		filters: doc.filters ?? {},
		createdAt: formatDateTime(doc.createdAt),
	};
}

export async function createMeter(deps: UsageDeps, input: MeterInput): Promise<MeterView | UsageError> {
	if ((input.aggregation === "count") !== (input.property === undefined)) return UsageError.MeterProperty;
	if (!(await accountExists(deps, input.accountId))) return UsageError.UnknownAccount;
	const doc: MeterDoc = {
		_id: meterKey(input.accountId, input.code),
		accountId: input.accountId,
		code: input.code,
		name: input.name,
		aggregation: input.aggregation,
		property: input.property ?? null,
		filters: input.filters ?? {},
		createdAt: deps.now(),
	};
	try {
		await deps.db.meters.create(doc);
	} catch (err) {
		if (isDuplicateKey(err)) return UsageError.MeterExists;
		throw err;
	}
	deps.meterCache.forget(input.accountId);
	return toMeterView(doc);
}

async function accountExists(deps: UsageDeps, accountId: number): Promise<boolean> {
	try {
		await deps.call("accounts.get", { accountId });
		return true;
	} catch (err) {
		if ((err as { type?: string }).type === ApiErrorType.NotFound) return false;
		throw err;
	}
}

/** The account's meters, by code; all of them when `codes` is absent. */
export async function listMeters(deps: UsageDeps, input: { accountId: number; codes?: string[] }): Promise<MeterView[]> {
	const docs = input.codes
		? await deps.db.meters.find({ _id: { $in: input.codes.map(code => meterKey(input.accountId, code)) } }).lean()
		: await deps.db.meters.find({ accountId: input.accountId }).lean();
	return docs.sort((a, b) => a.code.localeCompare(b.code)).map(toMeterView);
}

/** Meters as ingestion reads them: by key, kept a few seconds per node (a new meter is seen at once on the node that made it). */
export function createMeterCache(read: (keys: string[]) => Promise<MeterDoc[]>, ttlMs = 5000, now = () => Date.now()) {
	const cache = new Map<string, { doc: MeterDoc | null; at: number }>();
	return {
		async get(accountId: number, codes: string[]): Promise<Map<string, MeterDoc>> {
			const keys = [...new Set(codes)].map(code => meterKey(accountId, code));
			const stale = keys.filter(key => {
				const hit = cache.get(key);
				return !hit || now() - hit.at > ttlMs;
			});
			if (stale.length) {
				const found = new Map((await read(stale)).map(doc => [doc._id, doc]));
				for (const key of stale) cache.set(key, { doc: found.get(key) ?? null, at: now() });
			}
			const meters = new Map<string, MeterDoc>();
			for (const key of keys) {
				const doc = cache.get(key)?.doc;
				if (doc) meters.set(doc.code, doc);
			}
			return meters;
		},
		forget(accountId: number): void {
			for (const key of cache.keys()) if (key.startsWith(`${accountId}:`)) cache.delete(key);
		},
	};
}

export type MeterCache = ReturnType<typeof createMeterCache>;
