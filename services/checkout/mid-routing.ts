// Which MID takes a checkout (docs/disputes.md#routing). The eligible MIDs
// (active, taking the card's brand, weight above 0) share a node's checkouts
// by weight, in nginx's smooth weighted round robin: over any run of W
// checkouts (W the weights' sum) a MID of weight w takes w, spread evenly. A
// MID whose monthly cap the sale would pass is skipped.
//
// A cap is checked against what billing counted this month (billing.midVolumes,
// asked again after VOLUME_TTL_MS) plus what this node sold since it asked and
// what its checkouts in flight may sell. So one node never passes a cap; other
// nodes' sales of the last VOLUME_TTL_MS are what several nodes together can
// pass it by (measured in test/cluster/mid-caps.test.ts).
import type { Call } from "../../shared/call";
import type { MerchantAccountView } from "../../shared/contracts/accounts";
import { findCurrency, toMinorUnits } from "../../shared/money";

/** How long a MID's counted volume is used before billing is asked again. */
export const VOLUME_TTL_MS = 1000;

/** A charge the checkout is about to make: what a capped MID must have room for. */
export interface Sale {
	amountMinor: number;
	currency: string;
}

export interface Routed {
	mid: MerchantAccountView;
	/** The checkout ended: `sold` when its charge was approved. Call once. */
	settle(sold: boolean): void;
}

export interface MidRouter {
	/** The MID for this checkout, or null when every eligible MID is at its cap. `sale` null: nothing charged now. */
	pick(eligible: MerchantAccountView[], sale: Sale | null): Promise<Routed | null>;
}

interface Volume {
	/** Billing's count for the month, by currency, when last asked (minor units). */
	counted: Record<string, number>;
	askedAt: number;
	/** Sold by this node since, and held by its checkouts in flight (minor units of the cap's currency). */
	soldSince: number;
	inFlight: number;
}

export function createMidRouter(call: Call, now: () => number = Date.now): MidRouter {
	/** The smooth round robin's running weights, per set of eligible MIDs. */
	const current = new Map<string, Map<number, number>>();
	const volumes = new Map<number, Volume>();

	/** The eligible MIDs in the order the round robin offers them now (the first is its pick). */
	function inTurn(eligible: MerchantAccountView[]): MerchantAccountView[] {
		const key = eligible.map(m => `${m.id}:${m.weight}`).join(",");
		const running = current.get(key) ?? current.set(key, new Map()).get(key)!;
		const total = eligible.reduce((sum, m) => sum + m.weight, 0);
		for (const mid of eligible) running.set(mid.id, (running.get(mid.id) ?? 0) + mid.weight);
		const order = [...eligible].sort((a, b) => running.get(b.id)! - running.get(a.id)! || a.id - b.id);
		running.set(order[0].id, running.get(order[0].id)! - total);
		return order;
	}

	/** The refresh in flight per MID: concurrent checkouts wait for it rather than ask again (one reset per answer). */
	const refreshing = new Map<number, Promise<void>>();

	/** Refreshes the counted volumes of the capped MIDs that are stale, in one call; waits for those already being refreshed. */
	async function refresh(mids: MerchantAccountView[]): Promise<void> {
		const stale = mids.filter(m => !refreshing.has(m.id) && (volumes.get(m.id)?.askedAt ?? 0) + VOLUME_TTL_MS <= now());
		if (stale.length) {
			const asked = ask(stale);
			for (const mid of stale) refreshing.set(mid.id, asked);
			void asked
				.catch(() => undefined)
				.finally(() => {
					for (const mid of stale) refreshing.delete(mid.id);
				});
		}
		await Promise.all(mids.flatMap(m => refreshing.get(m.id) ?? []));
	}

	async function ask(stale: MerchantAccountView[]): Promise<void> {
		const askedAt = now();
		const soldBefore = new Map(stale.map(m => [m.id, volumes.get(m.id)?.soldSince ?? 0]));
		const { volumes: counted } = await call("billing.midVolumes", { midIds: stale.map(m => m.id) });
		for (const mid of stale) {
			const kept = volumes.get(mid.id);
			// What this node sold before asking is in billing's count; what it sold while asking may not be, and is kept
			// (counted twice for a moment, never missed).
			const soldSince = (kept?.soldSince ?? 0) - soldBefore.get(mid.id)!;
			volumes.set(mid.id, { counted: counted[mid.id] ?? {}, askedAt, soldSince, inFlight: kept?.inFlight ?? 0 });
		}
	}

	function hasRoom(mid: MerchantAccountView, sale: Sale): boolean {
		const cap = mid.monthlyCap;
		if (!cap || cap.currency !== sale.currency) return true;
		const volume = volumes.get(mid.id)!;
		const capMinor = toMinorUnits(cap.amount, findCurrency(cap.currency)!) as number;
		return (volume.counted[cap.currency] ?? 0) + volume.soldSince + volume.inFlight + sale.amountMinor <= capMinor;
	}

	return {
		async pick(eligible, sale) {
			const weighted = eligible.filter(m => m.weight > 0);
			if (weighted.length === 0) return null;
			const capped = sale ? weighted.filter(m => m.monthlyCap?.currency === sale.currency) : [];
			if (capped.length) await refresh(capped);
			const mid = inTurn(weighted).find(m => !sale || hasRoom(m, sale));
			if (!mid) return null;
			const held = sale && capped.includes(mid) ? sale.amountMinor : 0;
			if (held) volumes.get(mid.id)!.inFlight += held;
			let settled = false;
			return {
				mid,
				settle(sold) {
					if (settled || !held) return;
					settled = true;
					const volume = volumes.get(mid.id)!;
					volume.inFlight -= held;
					if (sold) volume.soldSince += held;
				},
			};
		},
	};
}
