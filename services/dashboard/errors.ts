// The dashboard's domain errors; the actions turn them into the answers of
// docs/dashboard.md.
import type { ErrorTable } from "../../shared/action";
import { ApiErrorType } from "../../shared/errors";

export enum DashboardError {
	UnknownUser = "UNKNOWN_USER",
	EmailTaken = "EMAIL_TAKEN",
	/** Wrong email or password, a disabled user, or a locked one: one generic answer for all. */
	SignInRefused = "SIGN_IN_REFUSED",
	/** Too many failed sign-ins for this user: locked for a while. */
	LockedOut = "LOCKED_OUT",
	NoSession = "NO_SESSION",
}

/** What the dashboard's routes answer for each error (docs/dashboard.md). */
export const DASHBOARD_ERRORS: ErrorTable<DashboardError> = {
	[DashboardError.UnknownUser]: { type: ApiErrorType.NotFound, message: "No dashboard user with this id in this account" },
	[DashboardError.EmailTaken]: { type: ApiErrorType.Conflict, message: "A dashboard user with this email exists" },
	[DashboardError.SignInRefused]: { type: ApiErrorType.Unauthorized, message: "Email or password is wrong" },
	[DashboardError.LockedOut]: { type: ApiErrorType.TooManyRequests, message: "Too many failed sign-ins: try again in a few minutes" },
	[DashboardError.NoSession]: { type: ApiErrorType.Unauthorized, message: "Not signed in, or the session expired" },
};
