// A period closed by the charge that bills it (docs/usage.md#billing): billing
// asks at each renewal (and at an unsubscribe, `final`), and gets the period's
// usage per meter and the late events of the period before, which this close
// seals. A close is written once, so a renewal retried after a decline bills
// the same usage; what comes late after it is the next close's adjustment.
import type { ClosedPeriod, MeterAdjustment, MeterUsage, UsageActions, UsageValues } from "../../shared/contracts/usage";
import { isDuplicateKey, raw } from "../../shared/persistence";
import { aggregateKey, valuesOf } from "./batch-apply";
import type { UsageDeps } from "./deps";
import type { CloseDoc } from "./models";
import { lateUntil } from "./periods";

export type CloseInput = UsageActions["usage.closePeriod"]["params"];

const answerOf = (doc: CloseDoc): ClosedPeriod => ({
	period: doc.period,
	start: doc.start ? new Date(doc.start).toISOString() : null,
	end: new Date(doc.end).toISOString(),
	usage: doc.usage as MeterUsage[],
	adjustments: doc.adjustments as MeterAdjustment[],
});

const same = (a: UsageValues, b: UsageValues) => (Object.keys(a) as (keyof UsageValues)[]).every(key => a[key] === b[key]);

export async function closePeriod(deps: UsageDeps, input: CloseInput): Promise<ClosedPeriod> {
	const { accountId, customerId, period } = input;
	const closeKey = `${customerId}:${period}`;
	const done = await deps.db.closes.findById(closeKey).lean();
	if (done) return answerOf(done);
	const end = new Date(input.end);
	const nextEnd = input.nextEnd ? new Date(input.nextEnd) : null;
	const known = await deps.db.periods.findById(customerId).lean();
	const start = known?.current.period === period && known.current.start ? known.current.start : new Date(input.start);
	// From here on an event of this period is late: counted in it, billed by the next close.
	await deps.db.periods.updateOne(
		{ _id: customerId },
		{
			$setOnInsert: { createdAt: deps.now() },
			$set: {
				accountId,
				current: { period: period + 1, start: end, end: nextEnd },
				previous: { period, start, end },
				lateUntil: input.final ? null : lateUntil(end, nextEnd),
				endedAt: input.final ? end : null,
			},
		},
		{ upsert: true },
	);
	const meters = await deps.meterCache.get(accountId, input.meters);
	const aggregates = await deps.db.aggregates
		.find({ _id: { $in: input.meters.map(meter => aggregateKey(customerId, meter, period)) } })
		.lean();
	const byId = new Map(aggregates.map(doc => [doc._id, doc]));
	const usage: MeterUsage[] = [...meters.values()].map(meter => ({
		meter: meter.code,
		name: meter.name,
		aggregation: meter.aggregation,
		values: valuesOf(byId.get(aggregateKey(customerId, meter.code, period)) ?? null),
	}));
	const doc: CloseDoc = {
		_id: closeKey,
		accountId,
		customerId,
		period,
		start,
		end,
		usage,
		adjustments: await sealPrevious(deps, customerId, period),
		closedAt: deps.now(),
	};
	try {
		await deps.db.closes.create(doc);
		return answerOf(doc);
	} catch (err) {
		if (!isDuplicateKey(err)) throw err;
		return answerOf((await deps.db.closes.findById(closeKey).lean())!);
	}
}

/** The period before's meters, sealed: what they count now against what its close billed. */
async function sealPrevious(deps: UsageDeps, customerId: number, period: number): Promise<MeterAdjustment[]> {
	if (period === 0) return [];
	const before = await deps.db.closes.findById(`${customerId}:${period - 1}`).lean();
	const adjustments: MeterAdjustment[] = [];
	for (const billed of (before?.usage ?? []) as MeterUsage[]) {
		const zero = { customerId, meter: billed.meter, period: period - 1, count: 0, sum: 0, max: 0, unique: 0, latest: "", applied: [] };
		const sealed = await raw(deps.db.aggregates).findOneAndUpdate(
			{ _id: aggregateKey(customerId, billed.meter, period - 1) },
			{ $set: { sealed: true }, $setOnInsert: zero },
			{ upsert: true, returnDocument: "after" },
		);
		const final = valuesOf(sealed);
		if (!same(final, billed.values))
			adjustments.push({
				meter: billed.meter,
				name: billed.name,
				aggregation: billed.aggregation,
				period: period - 1,
				billed: billed.values,
				final,
			});
	}
	return adjustments;
}

/** The customer's current period and its usage of the meters named (billing's preview); null: usage never heard of it. */
export async function currentUsage(
	deps: UsageDeps,
	input: { accountId: number; customerId: number; meters: string[] },
): Promise<{ period: number; start: string | null; end: string | null; usage: MeterUsage[] } | null> {
	const known = await deps.db.periods.findById(input.customerId).lean();
	if (!known || known.accountId !== input.accountId) return null;
	const { period, start, end } = known.current;
	const meters = await deps.meterCache.get(input.accountId, input.meters);
	const aggregates = await deps.db.aggregates
		.find({ _id: { $in: [...meters.keys()].map(meter => aggregateKey(input.customerId, meter, period)) } })
		.lean();
	const byId = new Map(aggregates.map(doc => [doc._id, doc]));
	return {
		period,
		start: start ? new Date(start).toISOString() : null,
		end: end ? new Date(end).toISOString() : null,
		usage: [...meters.values()].map(meter => ({
			meter: meter.code,
			name: meter.name,
			aggregation: meter.aggregation,
			values: valuesOf(byId.get(aggregateKey(input.customerId, meter.code, period)) ?? null),
		})),
	};
}
