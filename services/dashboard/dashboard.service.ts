// The merchant dashboard's own data: its users, their sessions and the audit
// log. The pages (public/dashboard) and their routes (/dashboard/api, in the
// gateway) call the same actions as the REST API for everything else, so the
// dashboard adds no second path to money (docs/dashboard.md).
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { domainAction, domainErrors, idempotent } from "../../shared/action";
import { config } from "../../shared/config";
import { dbMixin } from "../../shared/db.mixin";
import { pageOrBadRequest } from "../../shared/list-page";
import { listAudit, recordAudit } from "./audit";
import type { DashboardDeps } from "./deps";
import { DASHBOARD_ERRORS } from "./errors";
import { createDashboardDb, type DashboardDb } from "./models";
import { schemas } from "./schemas";
import { sessionUser, signIn, signOut } from "./sign-in";
import { createUser, listUsers, updateUser } from "./users";

interface Locals {
	db: DashboardDb;
	deps: DashboardDeps;
}

const { action } = domainErrors(DASHBOARD_ERRORS);

const DashboardService: ServiceSchema<ServiceSettingSchema, Record<string, never>, Locals> = {
	name: "dashboard",
	mixins: [dbMixin("dashboard", createDashboardDb)],

	actions: {
		// The admin API and the REPL.
		createUser: action(schemas.createUser, createUser),
		listUsers: idempotent(action(schemas.listUsers, listUsers)),
		updateUser: action(schemas.updateUser, updateUser),
		// The gateway's /dashboard/api route.
		signIn: action(schemas.signIn, signIn),
		session: idempotent(domainAction(schemas.token, sessionUser)),
		signOut: idempotent(action(schemas.token, signOut)),
		recordAudit: action(schemas.recordAudit, recordAudit),
		audit: idempotent(domainAction(schemas.listAudit, listAudit, pageOrBadRequest)),
	},

	started() {
		const { dashboardIdleMinutes, dashboardLockoutFailures, dashboardLockoutMinutes } = config();
		this.deps = {
			db: this.db,
			now: () => new Date(),
			settings: {
				idleMs: dashboardIdleMinutes * 60_000,
				lockoutFailures: dashboardLockoutFailures,
				lockoutMs: dashboardLockoutMinutes * 60_000,
			},
		};
	},
};

export default DashboardService;
