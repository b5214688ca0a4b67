// A first payment's 3-D Secure challenge on an Adyen MID, kept in adyen_outcomes
// by the payment's return token (the connector's returnTokenOf): that Adyen
// asked the buyer to take the issuer's page (`challenge:<token>`, written by the
// connector before the frame is told), and the redirectResult Adyen appended
// when the page sent the buyer back to GET /api/processors/adyen/returns/{token}
// (`return:<token>`, the first kept; the gateway passes on only what is
// well-formed, and nothing for a HEAD). The connector reads both after the
// challenge and in a lookup (connectors/adyen/lookups.ts). A return moves no money.
import type { PaymentsActions } from "../../shared/contracts/payments";
import { insertOnce } from "../../shared/persistence";
import type { AdyenOutcomeStore } from "./connectors/adyen/client";
import type { PaymentsDeps } from "./deps";
import type { AdyenChallengeDoc, PaymentsDb } from "./models";

const askedKey = (token: string) => `challenge:${token}`;
const returnKey = (token: string) => `return:${token}`;

/** The connector's side: a challenge asked, and what became of it. */
export function adyenChallenges(db: PaymentsDb, now: () => Date): Pick<AdyenOutcomeStore, "challengeAsked" | "challengeOf"> {
	return {
		async challengeAsked(token, { pspReference, cardToken }) {
			const asked: AdyenChallengeDoc = { _id: askedKey(token), pspReference, cardToken, receivedAt: now() };
			await insertOnce(db.adyenOutcomes, asked);
		},
		async challengeOf(token) {
			const asked = (await db.adyenOutcomes.findById(askedKey(token)).lean()) as AdyenChallengeDoc | null;
			if (!asked?.cardToken) return null;
			const back = (await db.adyenOutcomes.findById(returnKey(token)).lean()) as AdyenChallengeDoc | null;
			return { cardToken: asked.cardToken, redirectResult: back?.redirectResult ?? null };
		},
	};
}

/**
 * The buyer back from Adyen's page: the redirectResult kept once for a challenge asked under the token (a second
 * return keeps nothing more). Without a token or a redirectResult, or for a token no challenge was asked under,
 * nothing is kept; the gateway sends the buyer on to the frame's return page all the same.
 */
export async function adyenReturn(
	deps: PaymentsDeps,
	input: PaymentsActions["payments.adyenReturn"]["params"],
): Promise<PaymentsActions["payments.adyenReturn"]["result"]> {
	const { token, redirectResult } = input;
	if (token === undefined || redirectResult === undefined) return { kept: false };
	if (!(await deps.db.adyenOutcomes.findById(askedKey(token)).lean())) return { kept: false };
	const back: AdyenChallengeDoc = { _id: returnKey(token), redirectResult, receivedAt: deps.now() };
	return { kept: await insertOnce(deps.db.adyenOutcomes, back) };
}
