// Which MID takes a checkout (docs/disputes.md#routing). The eligible MIDs
// (active, taking the card's brand, weight above 0) share a node's checkouts
// by weight, in nginx's smooth weighted round robin: over any run of W
// checkouts (W the weights' sum) a MID of weight w takes w, spread evenly.
// A MID with a cap in the sale's currency takes the checkout only once
// billing has reserved the sale on its counter for the month (the sale's
// `reserve`: one conditional update there, so a cap is exact whatever the
// number of checkout nodes); one that refused is tried after the others on
// this node for the next FULL_MS, then in its turn again.
import type { MerchantAccountView } from "../../shared/contracts/accounts";
import type { CapReservation } from "../../shared/contracts/billing";

/** How long a node offers a MID whose cap refused a sale only after the others. */
export const FULL_MS = 1000;

/** A charge the checkout is about to make, which a capped MID must have room for. */
export interface Sale {
	currency: string;
	/** Reserves the sale on the MID's cap: `{reservation}` (null when no cap applies), or null when the cap has no room. */
	reserve(mid: MerchantAccountView): Promise<{ reservation: CapReservation | null } | null>;
}

export interface Routed {
	mid: MerchantAccountView;
	/** The cap's reservation, to give back if the checkout ends before its customer takes it; null when none. */
	reservation: CapReservation | null;
}

export interface MidRouter {
	/** The MID for this checkout, or null when every eligible MID is at its cap. `sale` null: nothing charged now. */
	pick(eligible: MerchantAccountView[], sale: Sale | null): Promise<Routed | null>;
}

export function createMidRouter(now: () => number = Date.now): MidRouter {
	/** The smooth round robin's running weights, per set of eligible MIDs. */
	const current = new Map<string, Map<number, number>>();
	/** Until when each MID whose cap last refused a sale is offered last. */
	const fullUntil = new Map<number, number>();

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

	return {
		async pick(eligible, sale) {
			const weighted = eligible.filter(m => m.weight > 0);
			if (weighted.length === 0) return null;
			const order = inTurn(weighted);
			const full = (mid: MerchantAccountView) => (fullUntil.get(mid.id) ?? 0) > now();
			for (const mid of [...order.filter(m => !full(m)), ...order.filter(full)]) {
				if (!sale || mid.monthlyCap?.currency !== sale.currency) return { mid, reservation: null };
				const reserved = await sale.reserve(mid);
				if (reserved) {
					fullUntil.delete(mid.id);
					return { mid, reservation: reserved.reservation };
				}
				fullUntil.set(mid.id, now() + FULL_MS);
			}
			return null;
		},
	};
}
