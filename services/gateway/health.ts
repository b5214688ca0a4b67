// GET /actuator/health: UP only when the transporter is connected and every
// service behind the gateway answers with its database reachable.
import type { ServiceBroker } from "moleculer";
import type { DbHealth } from "../../shared/db.mixin";
import type { DbOutage } from "../../shared/db-reachability";

type Status = "UP" | "DOWN";

export interface Health {
	status: Status;
	components: {
		/** `outages` names each unreachable database: since when, and its last error. */
		database: { status: Status; details: Record<string, Status>; outages?: Record<string, DbOutage> };
		transporter: { status: Status; details: { type: string } };
		services: { status: Status; details: Record<string, Status> };
	};
}

const HEALTH_CALL_TIMEOUT_MS = 2000;

function overall(statuses: Status[]): Status {
	return statuses.every(s => s === "UP") ? "UP" : "DOWN";
}

export async function checkHealth(broker: ServiceBroker, services: string[]): Promise<Health> {
	const transit = (broker as unknown as { transit?: { connected: boolean } }).transit;
	const transporterName = broker.transit ? broker.transit.tx.constructor.name : "none (single process)";
	const transporter: Status = !transit || transit.connected ? "UP" : "DOWN";

	// A service with a database reports it; one without (checkout) answers `{}`.
	const answers = await Promise.all(
		services.map(name =>
			broker
				.call<Partial<DbHealth>, Record<string, never>>(`${name}.health`, {}, { timeout: HEALTH_CALL_TIMEOUT_MS, retries: 0 })
				.then(answer => ({ name, service: "UP" as Status, database: answer.database, outage: answer.outage }))
				.catch(() => ({ name, service: "DOWN" as Status, database: undefined, outage: undefined })),
		),
	);
	// A service that does not answer is DOWN under `services`; its database is then unknown.
	const databases = Object.fromEntries(answers.flatMap(a => (a.database ? [[a.name, a.database]] : [])));
	const outages = Object.fromEntries(answers.flatMap(a => (a.outage ? [[a.name, a.outage]] : [])));
	const serviceStates = Object.fromEntries(answers.map(a => [a.name, a.service]));
	const components: Health["components"] = {
		database: {
			status: overall(Object.values(databases)),
			details: databases,
			...(Object.keys(outages).length > 0 ? { outages } : {}),
		},
		transporter: { status: transporter, details: { type: transporterName } },
		services: { status: overall(Object.values(serviceStates)), details: serviceStates },
	};
	return { status: overall(Object.values(components).map(c => c.status)), components };
}
