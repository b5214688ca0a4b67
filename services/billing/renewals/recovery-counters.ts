// The node's recovery counters on /metrics: Prometheus sums them over the
// billing nodes, so the recovery rate is
// sum(billing_recovery_recovered) / sum(billing_recovery_entered).
import type { ServiceBroker } from "moleculer";
import type { BillingDeps } from "../deps";

export function recoveryCounters(broker: ServiceBroker): BillingDeps["recoveryCounters"] {
	if (!broker.isMetricsEnabled()) return undefined;
	const counters = [
		{ name: "billing.recovery.entered", description: "Renewals declined for the first time in their period" },
		{ name: "billing.recovery.recovered", description: "Renewals approved after a decline in their period" },
		{ name: "billing.recovery.revenue", description: "Minor units recovered, by currency", labelNames: ["currency"] },
	];
	for (const counter of counters) if (!broker.metrics.getMetric(counter.name)) broker.metrics.register({ type: "counter", ...counter });
	return {
		entered: () => broker.metrics.increment("billing.recovery.entered"),
		recovered: (currency, amountMinor) => {
			broker.metrics.increment("billing.recovery.recovered");
			broker.metrics.increment("billing.recovery.revenue", { currency }, amountMinor);
		},
	};
}
