// The sessions service's own errors; those the checkout sees are in shared/contracts/sessions.ts.
export enum SessionsError {
	InvalidDomain = "INVALID_DOMAIN",
	/** A card update session for no customer of the account. */
	UnknownCustomer = "UNKNOWN_CUSTOMER",
	/** A card update session for a customer whose card cannot change (UNSUBSCRIBED, or never ACTIVE). */
	NotUpdatable = "NOT_UPDATABLE",
	/** A card update link that is unknown or expired. */
	UnknownLink = "UNKNOWN_LINK",
}
