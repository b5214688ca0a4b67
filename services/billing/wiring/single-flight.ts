// One run at a time per node, shared by the callers that arrive while it runs.
/** One run at a time on this node: a call while one runs gets that run's promise instead of starting another. */
export function singleFlight<T>(start: () => Promise<T>): { run(): Promise<T>; running(): Promise<T> | null } {
	let current: Promise<T> | null = null;
	return {
		run() {
			current ??= start().finally(() => {
				current = null;
			});
			return current;
		},
		running: () => current,
	};
}
