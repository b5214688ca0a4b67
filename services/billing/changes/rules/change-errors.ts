// Bad input to a change is an answer, not an exception: each caller (the
// billing action, later the API) maps the code to its own error.

export type ChangeError =
	| { code: "CURRENCY_MISMATCH"; expected: string; got: string }
	| { code: "INVALID_QUANTITY"; quantity: number }
	| { code: "INVALID_AMOUNT"; field: string; value: number }
	| { code: "INVALID_RENEWAL"; field: string }
	| { code: "INVALID_MODE"; mode: string }
	| { code: "INVALID_DATE"; field: string }
	| { code: "AT_OUTSIDE_PERIOD"; at: Date; start: Date; end: Date }
	| { code: "AT_BEFORE_LAST_CHANGE"; at: Date; lastChange: Date }
	| { code: "INVALID_STATE"; reason: string }
	/** A new interval starts a new period at once, which charges now: it takes `now_prorated` or `at_period_end`. */
	| { code: "INTERVAL_CHANGE_WITHOUT_PRORATION" }
	/** An amount would leave the integers a number holds exactly (2^53). */
	| { code: "AMOUNT_TOO_LARGE"; field: string };

export type ChangeResult<T> = { ok: true; value: T } | { ok: false; error: ChangeError };

export function ok<T>(value: T): ChangeResult<T> {
	return { ok: true, value };
}

export function failed<T>(error: ChangeError): ChangeResult<T> {
	return { ok: false, error };
}
