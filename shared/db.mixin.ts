// Each service opens its own mongoose connection to its own database
// (`<base>_<service>`), so no service can read another's collections and
// each can be pointed at a separate server with MONGO_URL_<SERVICE>.

import type { ServiceBroker, ServiceSchema } from "moleculer";
import mongoose, { type Connection } from "mongoose";
import { config } from "./config";
import { type DbOutage, DbReachability } from "./db-reachability";

// mongoose records `new Error().stack` on every query, only to explain a query
// executed twice; formatting that stack (through tsx's source maps) cost about
// 2 % of a node's CPU under load (bench/README.md). Our queries run once.
mongoose.set("skipOriginalStackTraces", true);

/** How long a health check waits for the database's answer. */
const PING_TIMEOUT_MS = 1000;

export interface DbHealth {
	database: "UP" | "DOWN";
	/** While the database is unreachable: since when, and the last error. */
	outage?: DbOutage;
}

export function mongoUrlFor(service: string, env: Record<string, string | undefined> = process.env): string {
	const url = env[`MONGO_URL_${service.toUpperCase()}`] || config().mongoUrl;
	if (!url) throw new Error(`MONGO_URL is not set for the ${service} service (npm start sets it to the embedded database)`);
	return url;
}

/** `mongodb://h:1/shop?x=1` -> `shop_accounts`; no database in the URL -> `payments_accounts`. */
export function databaseNameFor(service: string, url: string): string {
	const match = /^mongodb(?:\+srv)?:\/\/[^/]+\/([^?]+)/.exec(url);
	return `${match?.[1] || "payments"}_${service}`;
}

/** The metric that counts a service's database commands, by command and collection. */
export const DB_COMMANDS_METRIC = "db.commands";

function countCommands(broker: ServiceBroker, service: string, connection: Connection): void {
	if (!broker.isMetricsEnabled()) return;
	if (!broker.metrics.getMetric(DB_COMMANDS_METRIC)) {
		broker.metrics.register({
			name: DB_COMMANDS_METRIC,
			type: "counter",
			labelNames: ["service", "command", "collection"],
			description: "Database commands sent",
		});
	}
	connection.getClient().on("commandStarted", event => {
		const collection = String((event.command as Record<string, unknown>)[event.commandName] ?? "");
		broker.metrics.increment(DB_COMMANDS_METRIC, { service, command: event.commandName, collection });
	});
}

interface DbService {
	connection: Connection;
	logger: import("moleculer").Logger;
	reachability: DbReachability;
}

/** The driver says when it loses and finds the server; an outage that lasts is logged once (DB_OUTAGE_LOG_SECONDS). */
function watchReachability(svc: DbService, service: string): void {
	svc.reachability = new DbReachability(service, svc.logger, config().dbOutageLogSeconds * 1000);
	svc.connection.getClient().on("serverDescriptionChanged", event => {
		if (event.newDescription.type === "Unknown") svc.reachability.failed(event.newDescription.error ?? "the database server is unknown");
		else svc.reachability.reached();
	});
}

export interface DbLocals {
	connection: Connection;
}

/**
 * Opens the service's connection before `started` handlers run and builds its
 * models with `createModels`; the result is available as `this.db`.
 */
export function dbMixin<Db extends object>(service: string, createModels: (connection: Connection) => Db): Partial<ServiceSchema> {
	return {
		actions: {
			health: {
				visibility: "public",
				async handler(): Promise<DbHealth> {
					if (await this.pingDatabase()) return { database: "UP" };
					const outage = this.reachability.outage();
					return { database: "DOWN", ...(outage ? { outage } : {}) };
				},
			},
		},
		methods: {
			async pingDatabase(): Promise<boolean> {
				// The ping decides, not mongoose's readyState, which can lag behind the driver after a restart. Its
				// time limit is a timer of ours, so health answers within a second while server selection waits.
				if (!this.connection.db) return false;
				const ping = this.connection.db.command({ ping: 1 });
				let timer: NodeJS.Timeout | undefined;
				const timeout = new Promise<never>((_, reject) => {
					timer = setTimeout(() => reject(new Error("ping took over 1 s")), PING_TIMEOUT_MS);
				});
				try {
					await Promise.race([ping, timeout]);
					this.reachability.reached();
					return true;
				} catch (err) {
					// A ping left behind ends by itself (server selection gives up after 5 s).
					ping.catch(() => undefined);
					this.reachability.failed(err);
					return false;
				} finally {
					clearTimeout(timer);
				}
			},
		},
		async started() {
			const url = mongoUrlFor(service);
			this.connection = mongoose.createConnection(url, {
				dbName: databaseNameFor(service, url),
				serverSelectionTimeoutMS: 5000,
				autoIndex: false,
				autoCreate: false,
				// Every command is counted (db.commands, on /metrics when metrics are on), and tests check which use an index.
				monitorCommands: true,
			});
			await this.connection.asPromise();
			watchReachability(this as unknown as DbService, service);
			countCommands(this.broker, service, this.connection);
			this.db = createModels(this.connection);
			await Promise.all(
				Object.values(this.connection.models as Record<string, mongoose.Model<unknown>>).map(model => model.createIndexes()),
			);
		},
		async stopped() {
			this.reachability?.stop();
			await this.connection?.close();
		},
	};
}
