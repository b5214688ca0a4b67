// The dashboard service's actions the gateway calls for /dashboard/api
// (services/gateway/dashboard-routes.ts).

export type DashboardRole = "viewer" | "operator";

/** Who an open dashboard session belongs to. */
export interface SessionUser {
	userId: number;
	accountId: number;
	email: string;
	role: DashboardRole;
	/** Sent back by the pages in X-CSRF-Token on every change. */
	csrfToken: string;
}

export interface AuditInput {
	accountId: number;
	userId: number;
	email: string;
	/** What was done, e.g. `refund`. */
	action: string;
	/** What it was done to, e.g. `transaction 31`. */
	target: string | null;
	outcome: string;
	/** The client address. */
	from: string;
}

export interface DashboardActions {
	/** The session's user, or `NO_SESSION` (not open, idle too long, its user disabled). */
	"dashboard.session": { params: { token: string }; result: SessionUser | "NO_SESSION" };
	"dashboard.recordAudit": { params: AuditInput; result: { id: string } };
}
