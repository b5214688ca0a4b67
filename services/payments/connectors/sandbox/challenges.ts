// The sandbox's 3-D Secure challenge, as processors' own test pages do it: a
// page of the service (public/checkout/challenge.html) where a tester chooses
// whether the buyer completes or fails the challenge. The choice is kept once,
// and only while the checkout session that asked for it is open.
import { randomBytes } from "node:crypto";
import type { PaymentsDb, SandboxChallengeDoc } from "../../models";

const PREFIX = "sbx3ds_";

export const isSandboxChallenge = (reference: string | null): reference is string => reference?.startsWith(PREFIX) ?? false;

/** The page the frame shows; the checkout adds the session, which decides who may embed it. */
export const challengeUrl = (challengeId: string) => `/checkout/challenge.html?challenge=${challengeId}`;

export interface SandboxChallenges {
	open(until: Date): Promise<string>;
	/** The tester's choice; false when the challenge is unknown, already chosen, or over. */
	choose(challengeId: string, choice: "complete" | "fail"): Promise<boolean>;
	get(challengeId: string): Promise<SandboxChallengeDoc | null>;
}

export function createSandboxChallenges(db: PaymentsDb, now: () => Date): SandboxChallenges {
	return {
		async open(until) {
			const id = `${PREFIX}${randomBytes(16).toString("hex")}`;
			await db.sandboxChallenges.create({ _id: id, choice: null, until, createdAt: now() });
			return id;
		},
		async choose(challengeId, choice) {
			const open = await db.sandboxChallenges.findById(challengeId).lean();
			if (!open || open.choice !== null || open.until.getTime() <= now().getTime()) return false;
			const chosen = await db.sandboxChallenges.updateOne({ _id: challengeId, choice: null }, { $set: { choice } });
			return chosen.modifiedCount === 1;
		},
		get: challengeId => db.sandboxChallenges.findById(challengeId).lean(),
	};
}
