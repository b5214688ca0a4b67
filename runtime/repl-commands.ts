// Custom commands of `npm run repl` for the common admin operations; every
// other action is reachable with the REPL's built-in `call`.
import type { ServiceBroker } from "moleculer";

interface ReplArgs {
	options: Record<string, string | boolean | undefined>;
	[name: string]: unknown;
}

interface ReplCommand {
	command: string;
	description: string;
	options?: { option: string; description: string }[];
	action(broker: ServiceBroker, args: ReplArgs): Promise<void>;
}

function show(value: unknown): void {
	console.log(JSON.stringify(value, null, 2));
}

export const replCommands: ReplCommand[] = [
	{
		command: "accounts",
		description: "List merchants' accounts",
		async action(broker) {
			show(await broker.call("accounts.list"));
		},
	},
	{
		command: "account-create <name> <environment>",
		description: "Create an account (environment: sandbox or production); prints its API token once",
		async action(broker, args) {
			show(await broker.call("accounts.create", { name: args.name, environment: args.environment }));
		},
	},
	{
		command: "token-rotate <accountId>",
		description: "Issue a new API token; the old one works for --grace seconds (default 24 h)",
		options: [{ option: "-g, --grace <seconds>", description: "Grace period of the old token" }],
		async action(broker, args) {
			const graceSeconds = args.options.grace === undefined ? undefined : Number(args.options.grace);
			show(await broker.call("accounts.rotateToken", { accountId: Number(args.accountId), graceSeconds }));
		},
	},
	{
		command: "dashboard-users <accountId>",
		description: "List an account's dashboard users",
		async action(broker, args) {
			show(await broker.call("dashboard.listUsers", { accountId: Number(args.accountId) }));
		},
	},
	{
		command: "dashboard-user-create <accountId> <email> <role>",
		description: "Create a dashboard user (role: viewer or operator); prints a password once",
		async action(broker, args) {
			show(await broker.call("dashboard.createUser", { accountId: Number(args.accountId), email: args.email, role: args.role }));
		},
	},
	{
		command: "dashboard-user-disable <accountId> <userId>",
		description: "Disable a dashboard user: its sessions end at their next request",
		async action(broker, args) {
			show(await broker.call("dashboard.updateUser", { accountId: Number(args.accountId), userId: Number(args.userId), disabled: true }));
		},
	},
	{
		command: "products <accountId>",
		description: "List an account's products",
		async action(broker, args) {
			show(await broker.call("accounts.listProducts", { accountId: Number(args.accountId) }));
		},
	},
	{
		command: "product-activate <accountId> <productId> <active>",
		description: "Activate (true) or deactivate (false) a product",
		async action(broker, args) {
			const params = { accountId: Number(args.accountId), productId: Number(args.productId), active: args.active === "true" };
			show(await broker.call("accounts.updateProduct", params));
		},
	},
	{
		command: "merchant-accounts <accountId>",
		description: "List an account's merchant accounts (MIDs)",
		async action(broker, args) {
			show(await broker.call("accounts.listMerchantAccounts", { accountId: Number(args.accountId) }));
		},
	},
	{
		command: "bin-block <accountId> <bin>",
		description: "Add a 6- or 8-digit BIN to an account's blacklist",
		async action(broker, args) {
			show(await broker.call("accounts.addBlacklistedBin", { accountId: Number(args.accountId), bin: String(args.bin) }));
		},
	},
	{
		command: "bin-unblock <accountId> <bin>",
		description: "Remove a BIN from an account's blacklist",
		async action(broker, args) {
			show(await broker.call("accounts.removeBlacklistedBin", { accountId: Number(args.accountId), bin: String(args.bin) }));
		},
	},
	{
		command: "webhooks-failed <accountId>",
		description: "List an account's failing webhooks: PENDING after a failed attempt, and DEAD",
		async action(broker, args) {
			show(await broker.call("notifications.list", { accountId: Number(args.accountId), status: "FAILED" }));
		},
	},
	{
		command: "webhook-redeliver <eventId>",
		description: "Send one webhook again (any state): back to PENDING, due now",
		async action(broker, args) {
			show(await broker.call("notifications.redeliver", { eventId: String(args.eventId) }));
		},
	},
	{
		command: "renewals-status",
		description: "Customers due for renewal now, renewals in flight, suspended customers",
		async action(broker) {
			show(await broker.call("billing.renewalStatus", {}));
		},
	},
	{
		command: "recovery <accountId>",
		description: "An account's customers in recovery (retrying or suspended) and its monthly recovery rate and revenue recovered",
		async action(broker, args) {
			show(await broker.call("billing.recovery", { accountId: Number(args.accountId) }));
		},
	},
	{
		command: "renewals-run",
		description: "Run a renewal cycle now on one billing node (every due customer is charged once, whatever else runs)",
		options: [{ option: "-a, --at <iso>", description: "The cycle's time (default now)" }],
		async action(broker, args) {
			show(await broker.call("billing.runRenewals", args.options.at ? { at: String(args.options.at) } : {}));
		},
	},
	{
		command: "metrics-backfill",
		description: "Count what existed before the metrics, once: resumes where the last run stopped; a run after the end does nothing",
		options: [{ option: "-p, --pages <n>", description: "Pages of 100 ids per call (default 20)" }],
		async action(broker, args) {
			const pages = Number(args.options.pages ?? 20);
			const total = { customers: 0, transactions: 0, disputes: 0, done: false };
			while (!total.done) {
				const report = await broker.call<typeof total, object>("billing.backfillMetrics", { pages });
				for (const key of ["customers", "transactions", "disputes"] as const) total[key] += report[key];
				total.done = report.done;
			}
			show(total);
		},
	},
	{
		command: "customer <accountId> <customerId>",
		description: "A customer as the API shows it",
		async action(broker, args) {
			show(await broker.call("billing.getCustomer", { accountId: Number(args.accountId), id: Number(args.customerId) }));
		},
	},
	{
		command: "transaction <accountId> <transactionId>",
		description: "A transaction as the API shows it",
		async action(broker, args) {
			show(await broker.call("billing.getTransaction", { accountId: Number(args.accountId), id: Number(args.transactionId) }));
		},
	},
];
