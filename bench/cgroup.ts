// CPU limits for billing nodes: each in a cgroup (v1 cpu controller) of its
// own with a CFS quota, so that a node is as fast as a fraction of a core
// whatever else runs on the machine, and adding nodes adds capacity as it
// would on separate machines. Only the billing nodes are limited; the
// database, NATS and the other services are not.
import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { descendantsOf } from "./cpu-time";

const CPU_ROOT = "/sys/fs/cgroup/cpu";
const PERIOD_US = 100_000;

export interface CpuLimit {
	/** e.g. /sys/fs/cgroup/cpu/bench-123-billing-1 */
	path: string;
	cores: number;
	/** Moves the process and its descendants in (a process forked later is born in it); answers the pids moved. */
	add(pid: number): number[];
	/** Periods in which the group used its whole quota and was held back, so far. */
	throttledPeriods(): number;
	/** Moves what is left back to the root group and removes the group. */
	release(): void;
}

const open = new Set<CpuLimit>();

/** Throws, saying why, when this machine cannot limit a process's CPU (cgroup v1 cpu controller, as root). */
export function checkCpuLimits(): void {
	const why = !existsSync(path.join(CPU_ROOT, "cpu.cfs_quota_us"))
		? `${CPU_ROOT} is not a cgroup v1 cpu controller`
		: process.getuid?.() !== 0
			? "creating cgroups needs root"
			: (() => {
					try {
						accessSync(CPU_ROOT, constants.W_OK);
						return null;
					} catch {
						return `${CPU_ROOT} is not writable`;
					}
				})();
	if (why)
		throw new Error(
			`Cannot limit the billing nodes' CPU: ${why}. Run as root on a cgroup v1 machine, or pass --billing-cpu 0 to run them unlimited.`,
		);
}

const pidsIn = (dir: string) => readFileSync(path.join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);

function move(pid: number, dir: string): boolean {
	try {
		writeFileSync(path.join(dir, "cgroup.procs"), String(pid));
		return true;
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code === "ESRCH") return false; // exited meanwhile
		throw err;
	}
}

/** The process's cgroup in the cpu hierarchy, relative to its root, from /proc/<pid>/cgroup. */
function cpuGroupOf(pid: number): string | null {
	const line = readFileSync(`/proc/${pid}/cgroup`, "utf8")
		.split("\n")
		.find(l => l.split(":")[1]?.split(",").includes("cpu"));
	return line ? line.split(":")[2] : null;
}

/** A cgroup with a quota of `cores` (e.g. 0.3: 30 ms of CPU every 100 ms). */
export function limitCpu(name: string, cores: number): CpuLimit {
	checkCpuLimits();
	const dir = path.join(CPU_ROOT, `bench-${process.pid}-${name}`);
	mkdirSync(dir, { recursive: true });
	writeFileSync(path.join(dir, "cpu.cfs_period_us"), String(PERIOD_US));
	writeFileSync(path.join(dir, "cpu.cfs_quota_us"), String(Math.round(cores * PERIOD_US)));
	const relative = `/${path.basename(dir)}`;
	const limit: CpuLimit = {
		path: dir,
		cores,
		add(pid) {
			// The process first, so that what it forks from now on is born inside; then what it had forked already.
			const moved = [pid, ...descendantsOf(pid)].filter(p => move(p, dir));
			const outside = moved.filter(p => cpuGroupOf(p) !== relative);
			if (outside.length) throw new Error(`processes ${outside.join(", ")} did not move into ${dir}`);
			return moved;
		},
		throttledPeriods() {
			const stat = readFileSync(path.join(dir, "cpu.stat"), "utf8");
			return Number(/^nr_throttled (\d+)$/m.exec(stat)?.[1] ?? 0);
		},
		release() {
			if (!existsSync(dir)) return;
			for (const pid of pidsIn(dir)) move(pid, CPU_ROOT);
			rmdirSync(dir);
			open.delete(limit);
		},
	};
	open.add(limit);
	return limit;
}

/** Removes every group this process created: at the end of a run, on interruption and at exit (synchronous for that). */
export function releaseCpuLimits(): void {
	for (const limit of [...open]) {
		try {
			limit.release();
		} catch (err) {
			process.stderr.write(`could not remove ${limit.path}: ${(err as Error).message}\n`);
		}
	}
}
process.once("exit", releaseCpuLimits);
