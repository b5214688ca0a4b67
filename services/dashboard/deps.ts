// What the dashboard service's domain functions get: its database, the clock and its session and lockout settings.
import type { DashboardDb } from "./models";

export interface DashboardSettings {
	/** A session ends after this long without a request (DASHBOARD_IDLE_MINUTES). */
	idleMs: number;
	/** Failed sign-ins in a row that lock a user (DASHBOARD_LOCKOUT_FAILURES), and for how long. */
	lockoutFailures: number;
	lockoutMs: number;
}

export interface DashboardDeps {
	db: DashboardDb;
	settings: DashboardSettings;
	now: () => Date;
}
