// A checkout session's life:
//   VALID -> USED     a checkout consumes it just before paying
//   USED  -> VALID    that checkout's payment failed, so the buyer may retry
//   VALID -> EXPIRED  5 minutes after creation
// A USED session whose payment succeeded stays USED; EXPIRED is final. EXPIRED
// is never written: it is read off the clock, so no sweeper is needed.
export enum SessionStatus {
	Valid = "VALID",
	Used = "USED",
	Expired = "EXPIRED",
}

export type StoredSessionStatus = SessionStatus.Valid | SessionStatus.Used;

export const SESSION_LIFETIME_MS = 5 * 60 * 1000;

export function statusAt(stored: StoredSessionStatus, expiresAt: Date, now: Date): SessionStatus {
	if (stored === SessionStatus.Used) return SessionStatus.Used;
	return now.getTime() < expiresAt.getTime() ? SessionStatus.Valid : SessionStatus.Expired;
}
