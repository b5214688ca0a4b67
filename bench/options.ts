// `npm run bench -- [options]`: what to run and for how long.
export const SCENARIOS = [
	"checkout",
	"cluster",
	"reads",
	"renewals",
	"webhooks",
	"baseline",
	"growth",
	"commands",
	"scaleout",
	"idle",
	"usage",
] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface BenchOptions {
	quick: boolean;
	scenarios: Scenario[];
	/** Seconds of each measured run. */
	duration: number;
	/** Seconds of unmeasured load before each run (JIT, connection pools, caches). */
	warmup: number;
	/** Each run is repeated this many times; the figures are the medians. */
	repeat: number;
	concurrency: number[];
	/** Due customers of each renewal run. */
	customers: number;
	billingNodes: number[];
	/** Existing customers at which the growth scenario measures. */
	growthSizes: number[];
	/** Billing processes of the scale-out runs, each limited to `billingCpu` cores. */
	scaleNodes: number[];
	/** Due customers per scale-out run. */
	scaleCustomers: number;
	/** Cores each billing process may use in the scale-out runs (a cgroup quota); 0: unlimited. */
	billingCpu: number;
	/** Events per POST /api/usage request of the usage scenario, one measurement per size. */
	usageBatches: number[];
	/** Usage processes of the usage scenario's cluster runs, one cluster per number. */
	usageNodes: number[];
	/** Concurrent clients of the usage scenario (closed loop). */
	usageClients: number;
	/** Service processes run with --cpu-prof; profiles and their summaries go to the results folder. */
	profile: boolean;
	/** The embedded database keeps its data on disk (H2, as `npm start` runs it) instead of in memory. */
	persistent: boolean;
	outDir: string;
}

export const USAGE = `npm run bench -- [options]

  --quick                 everything, briefly (under two minutes): a smoke test, not a measurement
  --scenarios <list>      comma list of ${SCENARIOS.join(", ")} (default: all)
                            checkout  checkout (session + submission) in embedded mode (npm start)
                            cluster   the same in cluster mode (a process per service, NATS)
                            reads     GET /api/customer/{id} and GET /api/transaction/{id}, in turns with the
                                      read baseline (a bare server: token from memory, one read by _id); and
                                      in cluster mode when cluster runs too
                            renewals  due customers charged by 1, 2 and 3 billing processes
                            webhooks  delay from a checkout's answer to its webhooks' arrival
                            baseline  the bare server with the same database writes, for the ratio
                            growth    checkouts and reads at growing numbers of existing customers
                            commands  database commands per checkout and per renewal
                            scaleout  renewals by 1–4 billing processes, each limited to --billing-cpu cores
                            idle      every process at rest (CPU, database commands, NATS messages per second)
                            usage     POST /api/usage in batches (--usage-batches), embedded and in clusters of
                                      --usage-nodes usage processes, in turns with a bare-driver baseline; and
                                      what usage adds to a renewal (the test clock, metered vs unmetered)
  --duration <s>          seconds per measured run (default 10; quick 2)
  --warmup <s>            seconds of unmeasured load before each run (default 3; quick 1)
  --repeat <n>            runs of each measurement, figures are medians (default 3; quick 1)
  --concurrency <list>    checkout connections (default 1,16,64; quick 16)
  --customers <n>         due customers per renewal run (default 20000; quick 200)
  --billing-nodes <list>  billing processes of the renewal runs, unlimited (default 1,2,3)
  --growth-sizes <list>   existing customers of the growth runs (default 1000,10000,50000; quick 200,1000,2000)
  --scale-nodes <list>    billing processes of the scale-out runs (default 1,2,3,4; quick 1,2)
  --scale-customers <n>   due customers per scale-out run (default 3000; quick 100)
  --billing-cpu <cores>   CPU of each billing process in the scale-out runs, a cgroup quota (default 0.12;
                          0: unlimited); needs root and the cgroup v1 cpu controller
  --usage-batches <list>  events per usage request (default 100,1000)
  --usage-nodes <list>    usage processes of the usage scenario's cluster runs (default 1,2; quick none: embedded only)
  --usage-clients <n>     concurrent clients of the usage runs (default 4)
  --profile               run the service processes with --cpu-prof and summarize the profiles
  --persistent            the embedded database on disk (H2, every write committed before its answer, as
                          npm start runs it) instead of its memory backend (the tests')
  --out <dir>             results folder (default bench/results)

Environment: MONGO_URL=mongodb://host:port benchmarks against that server instead of the embedded one.`;

function list(value: string): string[] {
	return value
		.split(",")
		.map(s => s.trim())
		.filter(Boolean);
}

function positive(name: string, value: string | undefined): number {
	const n = Number(value);
	if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} needs a positive number, got ${value}`);
	return n;
}

export function parseOptions(argv: string[]): BenchOptions {
	const quick = argv.includes("--quick");
	const options: BenchOptions = {
		quick,
		scenarios: [...SCENARIOS],
		duration: quick ? 2 : 10,
		warmup: quick ? 1 : 3,
		repeat: quick ? 1 : 3,
		concurrency: quick ? [16] : [1, 16, 64],
		customers: quick ? 200 : 20_000,
		billingNodes: [1, 2, 3],
		growthSizes: quick ? [200, 1000, 2000] : [1000, 10_000, 50_000],
		scaleNodes: quick ? [1, 2] : [1, 2, 3, 4],
		scaleCustomers: quick ? 100 : 3000,
		billingCpu: 0.12,
		usageBatches: [100, 1000],
		usageNodes: quick ? [] : [1, 2],
		usageClients: 4,
		profile: false,
		persistent: false,
		outDir: "bench/results",
	};
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		const value = () => {
			const next = argv[++i];
			if (next === undefined) throw new Error(`${arg} needs a value`);
			return next;
		};
		switch (arg) {
			case "--quick":
				break;
			case "--persistent":
				options.persistent = true;
				break;
			case "--scenarios": {
				const names = list(value());
				const unknown = names.filter(n => !(SCENARIOS as readonly string[]).includes(n));
				if (unknown.length) throw new Error(`unknown scenario ${unknown.join(", ")}; choose from ${SCENARIOS.join(", ")}`);
				options.scenarios = names as Scenario[];
				break;
			}
			case "--duration":
				options.duration = positive(arg, value());
				break;
			case "--warmup":
				options.warmup = Number(value());
				break;
			case "--repeat":
				options.repeat = Math.round(positive(arg, value()));
				break;
			case "--concurrency":
				options.concurrency = list(value()).map(v => Math.round(positive(arg, v)));
				break;
			case "--customers":
				options.customers = Math.round(positive(arg, value()));
				break;
			case "--billing-nodes":
				options.billingNodes = list(value()).map(v => Math.round(positive(arg, v)));
				break;
			case "--growth-sizes":
				options.growthSizes = list(value()).map(v => Math.round(positive(arg, v)));
				break;
			case "--scale-nodes":
				options.scaleNodes = list(value()).map(v => Math.round(positive(arg, v)));
				break;
			case "--scale-customers":
				options.scaleCustomers = Math.round(positive(arg, value()));
				break;
			case "--billing-cpu": {
				const cores = Number(value());
				if (!Number.isFinite(cores) || cores < 0 || (cores > 0 && cores < 0.01))
					throw new Error(`--billing-cpu needs a number of cores, at least 0.01 (0 for no limit), got ${argv[i]}`);
				options.billingCpu = cores;
				break;
			}
			case "--usage-batches":
				options.usageBatches = list(value()).map(v => Math.round(positive(arg, v)));
				if (options.usageBatches.some(b => b > 1000)) throw new Error("--usage-batches: a request holds at most 1000 events");
				break;
			case "--usage-nodes":
				options.usageNodes = list(value()).map(v => Math.round(positive(arg, v)));
				break;
			case "--usage-clients":
				options.usageClients = Math.round(positive(arg, value()));
				break;
			case "--profile":
				options.profile = true;
				break;
			case "--out":
				options.outDir = value();
				break;
			case "--help":
			case "-h":
				console.log(USAGE);
				process.exit(0);
				break;
			default:
				throw new Error(`unknown option ${arg}\n\n${USAGE}`);
		}
	}
	return options;
}
