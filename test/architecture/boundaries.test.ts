// Each service owns its folder and its collections: a file under services/A/
// never imports from services/B/, and shared/ never imports a service. What the
// deployed service runs (services/, shared/, runtime/) never imports dev
// tooling, tests or entry points, and nothing imports an entry point (bin/).
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { serviceSchemas } from "../../runtime/services";

const ROOT = path.resolve(__dirname, "../..");
const SERVICES = path.join(ROOT, "services");

function sourceFiles(dir: string): string[] {
	return readdirSync(dir).flatMap(name => {
		const full = path.join(dir, name);
		return statSync(full).isDirectory() ? sourceFiles(full) : full.endsWith(".ts") ? [full] : [];
	});
}

function importsOf(file: string): string[] {
	const text = readFileSync(file, "utf8");
	const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|require\s*\(\s*)["']([^"']+)["']/g)].map(m => m[1]);
	return specifiers.filter(s => s.startsWith(".")).map(s => path.resolve(path.dirname(file), s));
}

function serviceOf(file: string): string | undefined {
	const relative = path.relative(SERVICES, file);
	return relative.startsWith("..") ? undefined : relative.split(path.sep)[0];
}

describe("Service boundaries", () => {
	test("When a file under services/<name>/ imports another file, then that file is in the same service or in shared/", () => {
		const offences = sourceFiles(SERVICES).flatMap(file =>
			importsOf(file)
				.filter(target => {
					const owner = serviceOf(target);
					return owner !== undefined && owner !== serviceOf(file);
				})
				.map(target => `${path.relative(ROOT, file)} -> ${path.relative(ROOT, target)}`),
		);

		expect(offences).toEqual([]);
	});

	test("When a file under shared/ imports another file, then it is not a service's", () => {
		const offences = sourceFiles(path.join(ROOT, "shared")).flatMap(file =>
			importsOf(file)
				.filter(target => serviceOf(target) !== undefined)
				.map(target => `${path.relative(ROOT, file)} -> ${path.relative(ROOT, target)}`),
		);

		expect(offences).toEqual([]);
	});

	test("When a file the deployed service runs (services/, shared/, runtime/) imports another file, then it is not dev tooling or a test", () => {
		const running = ["services", "shared", "runtime"].flatMap(dir => sourceFiles(path.join(ROOT, dir)));
		const offences = running.flatMap(file =>
			importsOf(file)
				.filter(target => ["dev", "test", "bench", "bin"].some(dir => !path.relative(path.join(ROOT, dir), target).startsWith("..")))
				.map(target => `${path.relative(ROOT, file)} -> ${path.relative(ROOT, target)}`),
		);

		expect(offences).toEqual([]);
	});

	test("When bin/ is listed, then it holds entry points only: nothing imports from it", () => {
		const everything = ["services", "shared", "runtime", "dev", "test", "bench", "bin"].flatMap(dir => sourceFiles(path.join(ROOT, dir)));
		const offences = everything.flatMap(file =>
			importsOf(file)
				.filter(target => !path.relative(path.join(ROOT, "bin"), target).startsWith(".."))
				.map(target => `${path.relative(ROOT, file)} -> ${path.relative(ROOT, target)}`),
		);

		expect(offences).toEqual([]);
	});

	test("The boundary check itself catches a cross-service import", () => {
		const fake = path.join(SERVICES, "sessions", "x.ts");
		const target = path.resolve(path.dirname(fake), "../accounts/models");

		expect(serviceOf(target)).toBe("accounts");
		expect(serviceOf(target)).not.toBe(serviceOf(fake));
	});
});

describe("Every service reads the same way", () => {
	const ORDER = [
		"name",
		"mixins",
		"settings",
		"dependencies",
		"hooks",
		"actions",
		"events",
		"methods",
		"merged",
		"created",
		"started",
		"stopped",
	];

	test.each(Object.entries(serviceSchemas))(
		"When the %s service's schema is read, then its sections come in the template's order",
		(_, schema) => {
			// Act
			const sections = Object.keys(schema).filter(key => ORDER.includes(key));

			// Assert
			expect(sections).toEqual([...sections].sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b)));
		},
	);

	test.each(Object.keys(serviceSchemas).filter(name => name !== "gateway"))(
		"When the %s service is listed, then its dependencies are typed in deps.ts",
		name => {
			// Act
			const files = readdirSync(path.join(SERVICES, name));

			// Assert
			expect(files).toContain("deps.ts");
		},
	);
});
