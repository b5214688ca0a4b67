// Group commit: concurrent writes of one kind on this node go to the database
// together. While one command of a group is in flight, the writes that arrive
// wait and leave as the next command, so a busy node sends one command where
// it would send one per caller, and a quiet one waits for nothing (a caller
// alone is sent at once). Each caller's promise settles with its own result
// once the command that carried it is answered; a failed command fails every
// caller it carried, as each would have failed alone. A writer whose callers
// do not wait on the answer (bookkeeping after the fact) may linger: its first
// write waits a moment for others to join it.

interface Waiting<T, R> {
	item: T;
	resolve: (result: R) => void;
	reject: (err: unknown) => void;
}

export interface GroupCommitOptions {
	/** At most this many items per command (the rest wait for the next). */
	maxItems?: number;
	/** A command waits this long after the first of its items, so the items of that moment go together (default 0). */
	lingerMs?: number;
}

/**
 * A writer of items one at a time that sends them in groups. `send` writes a group in one command and answers one
 * result per item, in order.
 */
export function groupCommit<T, R = void>(
	send: (items: T[]) => Promise<R[] | undefined>,
	{ maxItems = 1000, lingerMs = 0 }: GroupCommitOptions = {},
): (item: T) => Promise<R> {
	let queue: Waiting<T, R>[] = [];
	let inFlight = false;

	async function flush(): Promise<void> {
		inFlight = true;
		if (lingerMs > 0) await new Promise(resolve => setTimeout(resolve, lingerMs));
		while (queue.length > 0) {
			const group = queue.slice(0, maxItems);
			queue = queue.slice(group.length);
			try {
				const results = await send(group.map(w => w.item));
				group.forEach((w, i) => {
					w.resolve(results?.[i] as R);
				});
			} catch (err) {
				for (const w of group) w.reject(err);
			}
		}
		inFlight = false;
	}

	return item =>
		new Promise<R>((resolve, reject) => {
			queue.push({ item, resolve, reject });
			if (!inFlight) void flush();
		});
}

/** Group commit per key: one command in flight per key, groups never mix keys. */
export function keyedGroupCommit<T, R = void>(
	send: (key: string, items: T[]) => Promise<R[] | undefined>,
	options: GroupCommitOptions = {},
): (key: string, item: T) => Promise<R> {
	const writers = new Map<string, { write: (item: T) => Promise<R>; pending: number }>();
	return async (key, item) => {
		let writer = writers.get(key);
		if (!writer) {
			writer = { write: groupCommit<T, R>(items => send(key, items), options), pending: 0 };
			writers.set(key, writer);
		}
		writer.pending++;
		try {
			return await writer.write(item);
		} finally {
			// Forgotten once idle, so a node does not keep a writer for every key it ever wrote.
			if (--writer.pending === 0) writers.delete(key);
		}
	};
}

/** One of what `make` builds per object (a model, a service's timelines): built on first use, forgotten with the object. */
export function perObject<K extends object, V>(make: (key: K) => V): (key: K) => V {
	const made = new WeakMap<K, V>();
	return key => {
		const found = made.get(key);
		if (found !== undefined) return found;
		const built = make(key);
		made.set(key, built);
		return built;
	};
}
