// A checkout session's life:
//   VALID -> USED     a checkout consumes it just before paying
//   USED  -> VALID    that checkout's payment ended unpaid (declined, failed, or
//                     its challenge abandoned), so the buyer may retry
//   VALID -> EXPIRED  5 minutes after creation
// A USED session whose payment succeeded stays USED; EXPIRED is final. EXPIRED
// is never written: it is read off the clock, so no sweeper is needed, and an
// unpaid session released after its end reads EXPIRED, never USED.
import { stateMachine } from "../../shared/state-machine";

export enum SessionStatus {
	Valid = "VALID",
	Used = "USED",
	Expired = "EXPIRED",
}

export type StoredSessionStatus = SessionStatus.Valid | SessionStatus.Used;

/** The moves that are written (EXPIRED is read off the clock). */
export const SESSION_TRANSITIONS: Record<StoredSessionStatus, StoredSessionStatus[]> = {
	[SessionStatus.Valid]: [SessionStatus.Used],
	[SessionStatus.Used]: [SessionStatus.Valid],
};

/** A session's status write (shared/state-machine.ts). */
export const sessionMove = stateMachine<"status", StoredSessionStatus>("session", "status", SESSION_TRANSITIONS);

/** VALID -> USED: a checkout consumes it. */
export const CONSUME = sessionMove(SessionStatus.Valid, SessionStatus.Used);
/** USED -> VALID: its payment ended unpaid, the buyer may retry. */
export const RELEASE = sessionMove(SessionStatus.Used, SessionStatus.Valid);

export const SESSION_LIFETIME_MS = 5 * 60 * 1000;

export function statusAt(stored: StoredSessionStatus, expiresAt: Date, now: Date): SessionStatus {
	if (stored === SessionStatus.Used) return SessionStatus.Used;
	return now.getTime() < expiresAt.getTime() ? SessionStatus.Valid : SessionStatus.Expired;
}
