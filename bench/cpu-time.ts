// CPU time of processes and of the machine, from /proc (Linux): how much of
// the machine the database server and each node used during a run, and how
// busy the machine was.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { round } from "./stats";

/** sysconf(_SC_CLK_TCK): the unit of utime and stime in /proc/<pid>/stat. */
const CLOCK_TICKS = (() => {
	try {
		return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
	} catch {
		return 100;
	}
})();

function read(file: string): string | null {
	try {
		return readFileSync(file, "utf8");
	} catch {
		return null; // the process is gone
	}
}

/** utime + stime of every thread of the process, in seconds; 0 once it is gone. */
export function cpuSecondsOf(pid: number): number {
	const stat = read(`/proc/${pid}/stat`);
	if (!stat) return 0;
	// The command name (field 2) may hold spaces: count fields after its closing parenthesis.
	const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
	return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

export function childrenOf(pid: number): number[] {
	let tasks: string[];
	try {
		tasks = readdirSync(`/proc/${pid}/task`);
	} catch {
		return [];
	}
	return tasks.flatMap(tid => (read(`/proc/${pid}/task/${tid}/children`) ?? "").split(" ").filter(Boolean).map(Number));
}

export function descendantsOf(pid: number): number[] {
	return childrenOf(pid).flatMap(child => [child, ...descendantsOf(child)]);
}

/** The first child process of `parent` running `command` (its /proc comm), e.g. the embedded database's java. */
export function childNamed(parent: number, command: string): number | null {
	return childrenOf(parent).find(pid => read(`/proc/${pid}/comm`)?.trim() === command) ?? null;
}

export interface CpuUse {
	/** CPU seconds over the interval, the process and its descendants together. */
	seconds: number;
	/** Cores used on average: CPU seconds per second of wall time. */
	cores: number;
}

/** Starts measuring the CPU use of a process and its descendants; `stop` answers it. */
export function cpuMeter(pid: number): { stop(): CpuUse } {
	const total = () => [pid, ...descendantsOf(pid)].reduce((sum, p) => sum + cpuSecondsOf(p), 0);
	const cpuAtStart = total();
	const startedAt = performance.now();
	return {
		stop() {
			const seconds = total() - cpuAtStart;
			const wall = (performance.now() - startedAt) / 1000;
			return { seconds: round(seconds, 2), cores: round(wall > 0 ? seconds / wall : 0, 2) };
		},
	};
}

/** Starts measuring the CPU time of several processes (each with its descendants) together: `stop` answers their seconds. */
export function cpuSecondsMeter(pids: number[]): { stop(): number } {
	const total = () => pids.flatMap(pid => [pid, ...descendantsOf(pid)]).reduce((sum, p) => sum + cpuSecondsOf(p), 0);
	const atStart = total();
	return { stop: () => round(total() - atStart, 2) };
}

/** Busy and total jiffies of all cores together, from the first line of /proc/stat. */
function machineTicks(): { busy: number; total: number } {
	const fields = (read("/proc/stat") ?? "").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
	const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
	// idle and iowait are the time no process ran.
	return { busy: total - fields[3] - fields[4], total };
}

/**
 * Starts measuring how busy the whole machine is; `stop` answers the cores in
 * use on average, their share of all cores, and the cores used by processes
 * other than this one and its descendants (another job on a shared machine).
 */
export interface MachineUse {
	cores: number;
	share: number;
	/** Cores used by processes other than the benchmark's. */
	outside: number;
}

export function machineMeter(): { stop(): MachineUse } {
	const start = machineTicks();
	const ours = cpuMeter(process.pid);
	const cpus = os.cpus().length;
	return {
		stop() {
			const end = machineTicks();
			const share = end.total > start.total ? (end.busy - start.busy) / (end.total - start.total) : 0;
			const cores = share * cpus;
			return { cores: round(cores, 2), share: round(share, 2), outside: round(Math.max(0, cores - ours.stop().cores), 2) };
		},
	};
}
