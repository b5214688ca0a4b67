// A renewal keeps its MID unless the MID is inactive or at its monthly cap;
// it then moves to another MID of its group that takes the card's brand and
// has room (docs/disputes.md#routing). A cycle's tracker reads what each
// capped MID sold this month once (mid-health.ts, monthVolumes), and adds what
// the cycle's own charges take. Several billing nodes renewing at once each see
// the others' charges only from their next cycle on.
import type { MerchantAccountView, RenewalTerms } from "../../../shared/contracts/accounts";
import { findCurrency, toMinorUnits } from "../../../shared/money";
import type { BillingDeps } from "../deps";
import type { CustomerDoc } from "../documents/customer";
import { monthVolumes } from "../mid-stats/mid-health";

export interface CapTracker {
	/** Takes `amountMinor` of the MID's cap if it has room (always, for a MID without a cap in that currency). */
	take(mid: MerchantAccountView, amountMinor: number, currency: string): Promise<boolean>;
	/** Gives back what a charge that was not approved took. */
	giveBack(midId: number, amountMinor: number): void;
}

export function createCapTracker(deps: BillingDeps): CapTracker {
	const sold = new Map<number, Promise<number>>();
	return {
		async take(mid, amountMinor, currency) {
			const cap = mid.monthlyCap;
			if (!cap || cap.currency !== currency) return true;
			const capMinor = toMinorUnits(cap.amount, findCurrency(cap.currency)!) as number;
			if (!sold.has(mid.id))
				sold.set(
					mid.id,
					monthVolumes(deps, { midIds: [mid.id] }).then(v => v[mid.id]?.[currency] ?? 0),
				);
			const before = await sold.get(mid.id)!;
			if (before + amountMinor > capMinor) return false;
			sold.set(mid.id, Promise.resolve(before + amountMinor));
			return true;
		},
		giveBack(midId, amountMinor) {
			const taken = sold.get(midId);
			if (taken)
				sold.set(
					midId,
					taken.then(v => v - amountMinor),
				);
		},
	};
}

/**
 * The MID a renewal of `amountMinor` (what the card is charged: seats and credit counted) charges on: its own, or the
 * first other MID of the group that may take it; null when none may. A hold's capture stays on the MID that placed it.
 */
export async function renewalMid(
	customer: CustomerDoc,
	terms: RenewalTerms,
	caps: CapTracker,
	amountMinor: number,
): Promise<Pick<MerchantAccountView, "id" | "name"> | null> {
	const { currency } = terms.product;
	const own = terms.merchantAccounts.find(m => m.id === customer.midId);
	if (customer.authorizationId !== null) {
		if (own) await caps.take(own, amountMinor, currency);
		return { id: customer.midId, name: customer.midName };
	}
	if (own?.active && (await caps.take(own, amountMinor, currency))) return own;
	for (const mid of terms.merchantAccounts) {
		if (mid.id === customer.midId || !mid.active || mid.weight === 0) continue;
		if (!mid.cardTypes.includes(customer.cardType as never) || customer.refusedMids?.includes(mid.id)) continue;
		if (await caps.take(mid, amountMinor, currency)) return mid;
	}
	return null;
}
