// The sandbox's answers: its references, outcomes and authentications.
import { randomBytes, randomInt } from "node:crypto";
import { AUTHENTICATION_FAILED_REASON, type Authentication, AuthenticationOutcome } from "../../../../shared/contracts/payments";
import type { ConnectorOutcome } from "../connector";
import { HARD_REASONS, type TestCard } from "./test-cards";

const reference = () => `sbx_${randomBytes(12).toString("hex")}`;
export const approved = (): ConnectorOutcome => ({ status: "APPROVED", reference: reference(), reason: null, hardDecline: false });
export const declined = (reason: string): ConnectorOutcome => ({
	status: "DECLINED",
	reference: reference(),
	reason,
	hardDecline: HARD_REASONS.has(reason),
});
/** A network's transaction id, as Visa's: 15 digits. */
const networkTransactionId = () => `5${String(randomInt(0, 100_000_000_000_000)).padStart(14, "0")}`;
/** The buyer present and the payment approved: the network's id that later merchant-initiated charges refer to. */
export const withNetworkId = (outcome: ConnectorOutcome): ConnectorOutcome =>
	outcome.status === "APPROVED" ? { ...outcome, networkTransactionId: networkTransactionId() } : outcome;
export const unavailable = (): ConnectorOutcome => ({
	status: "ERROR",
	reference: null,
	reason: "processor_unavailable",
	hardDecline: false,
});

/** How the sandbox authenticates a first payment by its test card (docs/authentication.md). */
export const AUTHENTICATIONS: Record<NonNullable<TestCard["threeDS"]> | "none", Authentication> = {
	frictionless: { version: "2.2.0", outcome: AuthenticationOutcome.Frictionless, eci: "05" },
	challenge: { version: "2.2.0", outcome: AuthenticationOutcome.Challenged, eci: "05" },
	notEnrolled: { version: "2.2.0", outcome: AuthenticationOutcome.Attempted, eci: "06" },
	// The directory server did not answer: the payment goes on unauthenticated (the documented fallback).
	unavailable: { version: null, outcome: AuthenticationOutcome.Unavailable, eci: "07" },
	none: { version: null, outcome: AuthenticationOutcome.NotRequired, eci: null },
};
const FAILED: Authentication = { version: "2.2.0", outcome: AuthenticationOutcome.Failed, eci: "07" };

/** What a challenge came to: approved when completed, declined when failed, nothing yet (null) when not chosen. */
export function afterChoice(choice: "complete" | "fail" | null): ConnectorOutcome | null {
	if (choice === "complete") return { ...withNetworkId(approved()), authentication: AUTHENTICATIONS.challenge };
	if (choice === "fail") return { ...declined(AUTHENTICATION_FAILED_REASON), authentication: FAILED };
	return null;
}
