// A MID's health, from its daily counts (mid-stats.ts): this calendar month
// and the last 30 days, read by key. The chargeback ratio is Visa's: disputes
// opened in the period over approved sales in it (Mastercard divides by the
// previous month's sales; docs/disputes.md#mid-health).
import { DateTime } from "luxon";
import { config } from "../../../shared/config";
import { findCurrency, toDecimal } from "../../../shared/money";
import { zoneOf } from "../../../shared/time";
import type { BillingDeps } from "../deps";
import type { MidStatsDoc } from "../records/counters";
import { dayOf } from "./mid-stats";

export interface MidFigures {
	/** Approved first charges and renewals. */
	sales: number;
	/** Decimal amounts, by currency. */
	salesAmount: Record<string, number>;
	declined: number;
	/** sales ÷ (sales + declined); null before any. */
	approvalRate: number | null;
	refunds: number;
	refundAmount: Record<string, number>;
	disputes: number;
	disputeAmount: Record<string, number>;
	/** Disputes lost. */
	chargebacks: number;
	/** disputes ÷ sales; null before any sale. */
	chargebackRatio: number | null;
}

export interface MidHealthView {
	midId: number;
	name: string;
	/** The calendar month (TIME_ZONE) so far. */
	month: MidFigures & { period: string };
	/** The 30 days that end today (TIME_ZONE), today included. */
	last30Days: MidFigures & { from: string; to: string };
	/** The chargeback ratio a warning starts at (CHARGEBACK_WARNING_PERCENT ÷ 100). */
	warningRatio: number;
	/** The month's or the 30 days' chargeback ratio reached `warningRatio`. */
	warning: boolean;
}

/** The days of a period, as mid_stats keys them. */
function daysBetween(from: DateTime, to: DateTime): string[] {
	const days: string[] = [];
	for (let day = from.startOf("day"); day <= to; day = day.plus({ days: 1 })) days.push(day.toFormat("yyyy-MM-dd"));
	return days;
}

/** The start of `now`'s day in the service's time zone: the day mid_stats counts in. */
const dayStart = (now: Date) => DateTime.fromISO(dayOf(now), { zone: zoneOf(config().timeZone) });

const ratio = (part: number, whole: number) => (whole === 0 ? null : Math.round((part / whole) * 1e6) / 1e6);

function decimals(minor: Record<string, number>): Record<string, number> {
	return Object.fromEntries(Object.entries(minor).map(([currency, amount]) => [currency, toDecimal(amount, findCurrency(currency)!)]));
}

function figuresOf(docs: (MidStatsDoc | undefined)[]): MidFigures {
	const sum = (field: "sales" | "declined" | "refunds" | "disputes" | "chargebacks") =>
		docs.reduce((total, doc) => total + (doc?.[field] ?? 0), 0);
	const amounts = (field: "salesAmount" | "refundAmount" | "disputeAmount") => {
		const total: Record<string, number> = {};
		for (const doc of docs)
			for (const [currency, minor] of Object.entries(doc?.[field] ?? {})) total[currency] = (total[currency] ?? 0) + minor;
		return decimals(total);
	};
	const sales = sum("sales");
	const declined = sum("declined");
	const disputes = sum("disputes");
	return {
		sales,
		salesAmount: amounts("salesAmount"),
		declined,
		approvalRate: ratio(sales, sales + declined),
		refunds: sum("refunds"),
		refundAmount: amounts("refundAmount"),
		disputes,
		disputeAmount: amounts("disputeAmount"),
		chargebacks: sum("chargebacks"),
		chargebackRatio: ratio(disputes, sales),
	};
}

/** Each of the account's MIDs' figures, in one read of at most 61 days per MID. */
export async function midHealth(deps: BillingDeps, input: { accountId: number }): Promise<MidHealthView[]> {
	const mids = await deps.merchantAccountsOf(input.accountId);
	const warningRatio = config().chargebackWarningRatio;
	// The account's today: its transactions count on the days of its time (a sandbox's test clock).
	const today = dayStart(await deps.clocks.now(input.accountId));
	const monthDays = daysBetween(today.startOf("month"), today);
	const rollingDays = daysBetween(today.minus({ days: 29 }), today);
	const keys = mids.flatMap(mid => [...new Set([...monthDays, ...rollingDays])].map(day => `${mid.id}:${day}`));
	const docs = new Map(keys.length ? (await deps.db.midStats.find({ _id: { $in: keys } }).lean()).map(doc => [doc._id, doc]) : []);
	return mids.map(mid => {
		const month = figuresOf(monthDays.map(day => docs.get(`${mid.id}:${day}`)));
		const last30Days = figuresOf(rollingDays.map(day => docs.get(`${mid.id}:${day}`)));
		const over = (figures: MidFigures) => figures.chargebackRatio !== null && figures.chargebackRatio >= warningRatio;
		return {
			midId: mid.id,
			name: mid.name,
			month: { period: today.toFormat("yyyy-MM"), ...month },
			last30Days: { from: rollingDays[0], to: rollingDays[rollingDays.length - 1], ...last30Days },
			warningRatio,
			warning: over(month) || over(last30Days),
		};
	});
}

/** What each MID sold in a calendar month (`YYYY-MM`, TIME_ZONE), in minor units by currency: what its monthly cap counts from. */
export async function monthVolumes(
	deps: BillingDeps,
	input: { midIds: number[]; month: string },
): Promise<Record<string, Record<string, number>>> {
	const first = DateTime.fromISO(`${input.month}-01`, { zone: zoneOf(config().timeZone) });
	const days = daysBetween(first, first.endOf("month"));
	const keys = input.midIds.flatMap(id => days.map(day => `${id}:${day}`));
	const volumes: Record<string, Record<string, number>> = Object.fromEntries(input.midIds.map(id => [id, {}]));
	if (keys.length === 0) return volumes;
	for (const doc of await deps.db.midStats.find({ _id: { $in: keys } }, { midId: 1, salesAmount: 1 }).lean()) {
		const volume = volumes[doc.midId];
		for (const [currency, minor] of Object.entries(doc.salesAmount ?? {})) volume[currency] = (volume[currency] ?? 0) + minor;
	}
	return volumes;
}
