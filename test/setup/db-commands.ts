// What the services of an in-process app send to the database, and whether
// the embedded database answers each command from an index. mongo-java-server
// uses an index only for an exact match on its fields (a unique index, or
// _id); our launcher also answers any filter that pins _id by equality or $in
// from the _id index (dev/db/MongoLauncher.java), as MongoDB does. Anything
// else scans the collection.
import type { CommandStartedEvent } from "mongodb";
import type { Connection } from "mongoose";
import type { TestApp } from "./app";

export interface RecordedCommand {
	service: string;
	command: string;
	collection: string;
	/** The command's filters: one per statement of an update or a delete. */
	filters: Record<string, unknown>[];
}

function connectionsOf(app: TestApp): [string, Connection][] {
	return app.broker.services
		.map(service => [service.name, (service as unknown as { connection?: Connection }).connection] as const)
		.filter((entry): entry is [string, Connection] => entry[1] !== undefined);
}

function filtersOf(event: CommandStartedEvent): Record<string, unknown>[] {
	const command = event.command as Record<string, unknown>;
	const statements = (key: string, field: string) =>
		((command[key] as Record<string, unknown>[]) ?? []).map(s => (s[field] ?? {}) as Record<string, unknown>);
	switch (event.commandName) {
		case "find":
			return [(command.filter ?? {}) as Record<string, unknown>];
		case "update":
			return statements("updates", "q");
		case "delete":
			return statements("deletes", "q");
		case "findAndModify":
			return [(command.query ?? {}) as Record<string, unknown>];
		case "count":
		case "distinct":
			return [(command.query ?? {}) as Record<string, unknown>];
		case "aggregate": {
			const first = ((command.pipeline as Record<string, unknown>[]) ?? [])[0];
			return [(first?.$match ?? {}) as Record<string, unknown>];
		}
		default:
			return [];
	}
}

/** Records every command the app's services send until `stop` is called. */
export function recordCommands(app: TestApp): { commands: RecordedCommand[]; stop(): void } {
	const commands: RecordedCommand[] = [];
	const listeners = connectionsOf(app).map(([service, connection]) => {
		const listener = (event: CommandStartedEvent) => {
			const collection = String((event.command as Record<string, unknown>)[event.commandName] ?? "");
			commands.push({ service, command: event.commandName, collection, filters: filtersOf(event) });
		};
		connection.getClient().on("commandStarted", listener);
		return () => connection.getClient().off("commandStarted", listener);
	});
	return {
		commands,
		stop: () => {
			for (const off of listeners) off();
		},
	};
}

/** Each collection's unique keys (the field lists of its unique indexes, and _id), from the services' models. */
export function uniqueKeysOf(app: TestApp): Map<string, string[][]> {
	const keys = new Map<string, string[][]>();
	for (const [, connection] of connectionsOf(app)) {
		for (const model of Object.values(connection.models)) {
			const unique = model.schema
				.indexes()
				.filter(([, options]) => options?.unique)
				.map(([fields]) => Object.keys(fields));
			keys.set(model.collection.collectionName, [["_id"], ...unique]);
		}
	}
	return keys;
}

/** An equality, or $in / $eq alone. */
function isExact(value: unknown): boolean {
	if (typeof value !== "object" || value === null || Array.isArray(value) || value instanceof Date) return true;
	const operators = Object.keys(value);
	return operators.length === 1 && (operators[0] === "$in" || operators[0] === "$eq");
}

/** Whether the embedded database answers the filter from an index (true for a command without a filter, such as an insert). */
export function isKeyed(filter: Record<string, unknown>, uniqueKeys: string[][]): boolean {
	const fields = Object.keys(filter);
	if (fields.includes("_id") && isExact(filter._id)) return true;
	return uniqueKeys.some(
		key =>
			key.length === fields.length &&
			key.every(field => fields.includes(field)) &&
			fields.every(field => isExact(filter[field])) &&
			(key.length === 1 || fields.every(field => typeof filter[field] !== "object")),
	);
}

/** The recorded commands that scan, as readable lines. */
export function scans(commands: RecordedCommand[], uniqueKeys: Map<string, string[][]>): string[] {
	return commands.flatMap(c =>
		c.filters
			.filter(filter => !isKeyed(filter, uniqueKeys.get(c.collection) ?? [["_id"]]))
			.map(filter => `${c.service} ${c.command} ${c.collection} ${JSON.stringify(filter)}`),
	);
}
