// Database commands per checkout: `npm start`'s topology with metrics on,
// checkouts at concurrency 16 for the run's duration, counted from the
// services' db.commands metric until their work (webhooks included) has died
// down, less the commands of an idle interval as long as the run. Divided by
// the customers the phase created: checkouts still in flight when the load
// stopped finish in the phase too.
import { type CommandsPerUnit, commandsDuring, commandsPerUnit, idleCommands, idleSecondsFor } from "./db-commands";
import type { CheckoutLoadResult } from "./load";
import { measureCheckout } from "./measure";
import type { BenchOptions } from "./options";
import { withServiceDbs } from "./service-db";
import { createShop } from "./shop";
import { type BenchContext, deploy, embeddedSpec } from "./topology";
import type { WebhookReceiver } from "./webhook-receiver";

export const COMMANDS_CONCURRENCY = 16;

export async function checkoutCommands(
	ctx: BenchContext,
	options: BenchOptions,
	receiver: WebhookReceiver,
): Promise<{ commands: CommandsPerUnit; checkout: CheckoutLoadResult }> {
	const deployment = await deploy(ctx, embeddedSpec("bench_commands", { metrics: true }));
	try {
		const shop = await createShop(deployment.url!, receiver.url);
		const ports = [...deployment.metricsPorts.values()];
		// Warm-up with its webhooks delivered, so that the idle interval is idle.
		if (options.warmup > 0)
			await measureCheckout(shop, COMMANDS_CONCURRENCY, { ...options, duration: options.warmup, warmup: 0 }, receiver);
		const idle = await idleCommands(ports, idleSecondsFor(options));
		const customers = () => withServiceDbs(deployment.mongoUrl, db => db("billing").collection("customers").estimatedDocumentCount());
		const before = await customers();
		const { interval, result } = await commandsDuring(ports, () =>
			measureCheckout(shop, COMMANDS_CONCURRENCY, { ...options, warmup: 0 }, receiver),
		);
		return { commands: commandsPerUnit(interval, idle, (await customers()) - before), checkout: result.result };
	} finally {
		await deployment.stop();
	}
}
