// Waiting for something another request or node is doing: one loop, used
// wherever a service must wait on the database instead of on a message.

export function sleep(ms: number): Promise<void> {
	return new Promise(resolve => setTimeout(resolve, ms));
}

/**
 * Calls `attempt` every `intervalMs` until it answers something other than
 * undefined, and answers that; after `timeoutMs` (if given) answers undefined.
 * The first attempt is made at once.
 */
export async function pollUntil<T>(
	attempt: () => Promise<T | undefined>,
	options: { intervalMs: number; timeoutMs?: number },
): Promise<T | undefined> {
	const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
	for (;;) {
		const answer = await attempt();
		if (answer !== undefined) return answer;
		if (Date.now() >= deadline) return undefined;
		await sleep(options.intervalMs);
	}
}
