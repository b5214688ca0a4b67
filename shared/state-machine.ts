// A state machine's moves, built from its table: the filter that a document is
// still in a state it may leave, and the $set of the state it moves to. Every
// status write of every service goes through one (billing's lifecycle.ts,
// sessions' and notifications' states.ts), so a move its table does not allow
// cannot be written; most moves are built once, at module load.

/** One move: `filter` goes into the conditional update's filter, `set` into its $set. */
export interface Move<F extends string, S extends string> {
	filter: Record<F, S | { $in: S[] }>;
	set: Record<F, S>;
}

/** Thrown when code asks for a move its table does not allow: a bug, never a request's fault. */
export class ForbiddenMove extends Error {}

/** The moves of the machine whose states are kept in `field` and may change as `table` says. */
export function stateMachine<F extends string, S extends string>(name: string, field: F, table: Record<S, readonly S[]>) {
	return (from: S | readonly S[], to: S): Move<F, S> => {
		const froms: S[] = typeof from === "string" ? [from] : [...from];
		const refused = froms.filter(state => !table[state].includes(to));
		if (froms.length === 0 || refused.length > 0) throw new ForbiddenMove(`${name}: ${froms.join(", ")} -> ${to} is not in its table`);
		const filter = { [field]: froms.length === 1 ? froms[0] : { $in: froms } } as Move<F, S>["filter"];
		return { filter, set: { [field]: to } as Move<F, S>["set"] };
	};
}
