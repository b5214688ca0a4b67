// A small seeded PRNG (mulberry32) and the choices the fuzzer makes with it,
// so a run is reproduced exactly by its seed: FUZZ_SEED=<n> npm run test:resilience.
export interface Random {
	readonly seed: number;
	/** [0, 1) */
	next(): number;
	int(min: number, max: number): number;
	chance(p: number): boolean;
	pick<T>(items: readonly T[]): T;
	/** A random permutation of some of the items, `count` of them. */
	sample<T>(items: readonly T[], count: number): T[];
	/** A new generator whose sequence depends only on this one's seed and `label`. */
	fork(label: string | number): Random;
}

export function mulberry32(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

function hash(text: string): number {
	let h = 2166136261;
	for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
	return h >>> 0;
}

export function createRandom(seed: number): Random {
	const next = mulberry32(seed);
	const random: Random = {
		seed,
		next,
		int: (min, max) => min + Math.floor(next() * (max - min + 1)),
		chance: p => next() < p,
		pick: items => items[Math.floor(next() * items.length)],
		sample(items, count) {
			const copy = [...items];
			for (let i = copy.length - 1; i > 0; i--) {
				const j = Math.floor(next() * (i + 1));
				[copy[i], copy[j]] = [copy[j], copy[i]];
			}
			return copy.slice(0, count);
		},
		fork: label => createRandom(hash(`${seed}:${label}`)),
	};
	return random;
}

/** FUZZ_SEED from the environment, or the fixed default that CI runs. */
export function seedFromEnv(fallback: number): number {
	const raw = process.env.FUZZ_SEED;
	if (raw === undefined || raw === "") return fallback;
	if (!/^\d+$/.test(raw)) throw new Error(`FUZZ_SEED must be a whole number, got "${raw}"`);
	return Number(raw) >>> 0;
}
