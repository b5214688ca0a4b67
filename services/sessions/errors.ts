// The sessions service's own errors; those the checkout sees are in shared/contracts/sessions.ts.
export enum SessionsError {
	InvalidDomain = "INVALID_DOMAIN",
}
