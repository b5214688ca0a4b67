// The movement between two states of one customer (docs/metrics.md#mrr-movements):
// pure. Each scope (a currency's total, `all`, and its product) gets at most one
// movement of exactly one kind, whose `mrr` is the difference in the customer's MRR
// in that scope and whose `subscribers` the difference in its count there, so
// over any sequence of states the movements of a scope add up to its final
// figures less its first. A switch of product keeps the customer a subscriber:
// the currency's total moves by the difference (expansion or contraction);
// the old product contracts by all its MRR and loses the subscriber, the new
// one expands and gains it.
import type { ChurnCause, Contribution } from "./subscription-state";

export const MOVEMENT_KINDS = ["new", "expansion", "contraction", "churned", "reactivated"] as const;
export type MovementKind = (typeof MOVEMENT_KINDS)[number];

/** Where a movement is counted: one product, or `all` the products, of one currency. */
export interface MetricsScope {
	currency: string;
	productId: number | "all";
}

export interface Movement extends MetricsScope {
	kind: MovementKind;
	/** Signed minor units: the scope's MRR after less before. */
	mrr: number;
	/** The scope's subscribers after less before: -1, 0 or 1. */
	subscribers: number;
	/** Set exactly when `kind` is `churned`. */
	cause: ChurnCause | null;
}

/** What moved in one scope. */
type Moved = Pick<Movement, "kind" | "mrr" | "subscribers" | "cause">;

/** A scope's key, as the counters name it: `<currency>:<productId|all>`. */
export const scopeKey = (scope: MetricsScope) => `${scope.currency}:${scope.productId}`;

/** The scopes a contribution counts in, with its MRR there: none unless a subscriber. */
export function scopesOf(contribution: Contribution | null): Map<string, MetricsScope & { mrr: number }> {
	const scopes = new Map<string, MetricsScope & { mrr: number }>();
	if (contribution?.standing !== "subscriber") return scopes;
	const { currency, productId, mrr } = contribution;
	for (const scope of [
		{ currency, productId },
		{ currency, productId: "all" as const },
	])
		scopes.set(scopeKey(scope), { ...scope, mrr });
	return scopes;
}

/** A scope the customer enters: new, back (reactivated), or from another scope while still a subscriber. */
function entered(before: Contribution | null, mrr: number): Moved {
	const kind = before?.standing === "subscriber" ? "expansion" : before?.standing === "lapsed" ? "reactivated" : "new";
	return { kind, mrr, subscribers: 1, cause: null };
}

/** A scope the customer leaves: churned (with its cause), or to another scope while still a subscriber. */
function left(after: Contribution, mrr: number): Moved {
	if (after.standing === "subscriber") return { kind: "contraction", mrr: -mrr, subscribers: -1, cause: null };
	// A subscriber that stops being one other than by lapsing (its product no longer renews) is counted unsubscribed.
	return { kind: "churned", mrr: -mrr, subscribers: -1, cause: after.cause ?? "unsubscribed" };
}

/** A scope's movement, from the customer's MRR there before (`from`, undefined: not counted there) to after. */
function movedIn(before: Contribution | null, after: Contribution, from?: { mrr: number }, to?: { mrr: number }): Moved | null {
	if (from && to) {
		const delta = to.mrr - from.mrr;
		if (delta === 0) return null;
		return { kind: delta > 0 ? "expansion" : "contraction", mrr: delta, subscribers: 0, cause: null };
	}
	if (to) return entered(before, to.mrr);
	return from ? left(after, from.mrr) : null;
}

/** The movements from `before` (null: the customer did not exist) to `after`; none when nothing counted changed. */
export function movementsBetween(before: Contribution | null, after: Contribution): Movement[] {
	const was = scopesOf(before);
	const is = scopesOf(after);
	const movements: Movement[] = [];
	for (const key of new Set([...was.keys(), ...is.keys()])) {
		const from = was.get(key);
		const to = is.get(key);
		const { currency, productId } = (from ?? to)!;
		const moved = movedIn(before, after, from, to);
		if (moved) movements.push({ currency, productId, ...moved });
	}
	return movements;
}
