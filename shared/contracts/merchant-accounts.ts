// A merchant's accounts at its processors (MIDs) as other services see them: the admin API's view and a MID's
// processor (the sandbox, Stripe or Adyen), its keys never in them.
import type { CardType, Environment } from "./accounts";

export interface MerchantAccountView {
	id: number;
	accountId: number;
	name: string;
	group: string;
	cardTypes: CardType[];
	active: boolean;
	/** Its processor; null: it has none (a production account's MID before it goes live), and cannot charge. */
	processor: MidProcessor | null;
	/** Its share of new checkouts among the eligible MIDs (0: none); default 1 (docs/disputes.md#routing). */
	weight: number;
	/** The most it may sell in a calendar month (TIME_ZONE), a decimal in `currency`; null: no cap. */
	monthlyCap: { amount: number; currency: string } | null;
}

/**
 * The processor a MID charges through, as the admin API shows it: the sandbox; Stripe with the last 4 characters of
 * its key and of its webhook signing secret (null: none set); or Adyen with its merchant account, its live URL prefix
 * (null: Adyen's test platform) and the last 4 characters of its API key and HMAC key. Keys and secrets are write-only,
 * kept by the payments service.
 */
export type MidProcessor =
	| { type: "sandbox" }
	| { type: "stripe"; keyMode: "test" | "live"; secretKeyLast4: string; webhookSecretLast4: string | null }
	/** keyMode: `live` with a live URL prefix (production accounts), else `test`. */
	| {
			type: "adyen";
			keyMode: "test" | "live";
			merchantAccount: string;
			liveUrlPrefix: string | null;
			apiKeyLast4: string;
			hmacKeyLast4: string | null;
	  };

/** A MID's account environment and processor (null: it has none it may use). */
export interface MerchantAccountProcessor {
	midId: number;
	accountId: number;
	environment: Environment;
	processor: MidProcessor | null;
}
