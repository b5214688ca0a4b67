// Which processor a MID charges through, with its credentials: asked of the
// accounts service (which owns MIDs) and kept for a few seconds, so a
// renewal batch does not ask once per customer.
import type { MerchantAccountProcessor } from "../../shared/contracts/accounts";
import type { AdyenConnector } from "./connectors/adyen/adyen-connector";
import type { Connector, MidContext } from "./connectors/connector";
import { SANDBOX_DECIDING_MS } from "./connectors/sandbox/sandbox-connector";
import type { StripeConnector } from "./connectors/stripe/stripe-connector";

/** How long a MID's processor is kept: a change to a MID reaches every payments node this soon. */
export const MID_CACHE_MS = 10_000;

/** The processor a MID charges through, as this service reaches it: its name, our connector to it, and the MID's context. */
export interface Processor {
	/** The processor's name, recorded on each operation ("sandbox", "stripe", "adyen"). */
	name: string;
	/** Our adapter to it (connectors/). */
	connector: Connector;
	mid: MidContext;
	/** How long one of its calls may take to decide (ledger/ledger.ts). */
	decidingMs: number;
}

export interface Processors {
	/** The MID's processor, or null when it has none it may use. */
	processorFor(midId: number): Promise<Processor | null>;
}

export function createProcessors(deps: {
	midProcessor(midId: number): Promise<MerchantAccountProcessor | null>;
	/** The MID's processor key, unsealed; null when none is stored. */
	secretKeyOf(midId: number): Promise<string | null>;
	sandbox: Connector;
	stripe: StripeConnector;
	adyen: AdyenConnector;
	now?: () => number;
}): Processors {
	const now = deps.now ?? Date.now;
	const cache = new Map<number, { until: number; processor: Promise<Processor | null> }>();

	/** A processor keyed by the MID's secret key, if the MID is allowed it: live keys for production accounts, test keys for sandbox ones. */
	async function keyed(mid: MerchantAccountProcessor, name: "stripe" | "adyen", connector: Connector & { decidingMs: number }) {
		// accounts refuses the rest; checked again here.
		if (!mid.processor || mid.processor.type === "sandbox") return null;
		if ((mid.environment === "production") !== (mid.processor.keyMode === "live")) return null;
		const secretKey = await deps.secretKeyOf(mid.midId);
		if (!secretKey) return null;
		const adyen =
			mid.processor.type === "adyen"
				? { adyen: { merchantAccount: mid.processor.merchantAccount, liveUrlPrefix: mid.processor.liveUrlPrefix } }
				: {};
		return { name, connector, mid: { midId: mid.midId, accountId: mid.accountId, secretKey, ...adyen }, decidingMs: connector.decidingMs };
	}

	async function resolve(midId: number): Promise<Processor | null> {
		const mid = await deps.midProcessor(midId);
		switch (mid?.processor?.type) {
			case "sandbox":
				// A production account never charges through the sandbox, whatever a MID says.
				if (mid.environment !== "sandbox") return null;
				return { name: "sandbox", connector: deps.sandbox, mid: { midId, accountId: mid.accountId }, decidingMs: SANDBOX_DECIDING_MS };
			case "stripe":
				return keyed(mid, "stripe", deps.stripe);
			case "adyen":
				// The live platform (a live URL prefix) for production accounts, the test platform for sandbox ones.
				return keyed(mid, "adyen", deps.adyen);
			default:
				return null;
		}
	}

	return {
		processorFor(midId) {
			const cached = cache.get(midId);
			if (cached && cached.until > now()) return cached.processor;
			const processor = resolve(midId);
			cache.set(midId, { until: now() + MID_CACHE_MS, processor });
			// A failed lookup (an outage) is not kept.
			processor.catch(() => cache.delete(midId));
			return processor;
		},
	};
}
