// The dashboard's domain errors; the actions turn them into the answers of
// docs/dashboard.md.
export enum DashboardError {
	UnknownUser = "UNKNOWN_USER",
	EmailTaken = "EMAIL_TAKEN",
	/** Wrong email or password, a disabled user, or a locked one: one generic answer for all. */
	SignInRefused = "SIGN_IN_REFUSED",
	/** Too many failed sign-ins for this user: locked for a while. */
	LockedOut = "LOCKED_OUT",
	NoSession = "NO_SESSION",
}

export const dashboardErrorMessages: Record<DashboardError, string> = {
	[DashboardError.UnknownUser]: "No dashboard user with this id in this account",
	[DashboardError.EmailTaken]: "A dashboard user with this email exists",
	[DashboardError.SignInRefused]: "Email or password is wrong",
	[DashboardError.LockedOut]: "Too many failed sign-ins: try again in a few minutes",
	[DashboardError.NoSession]: "Not signed in, or the session expired",
};
