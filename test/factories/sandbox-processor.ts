// The payments service as billing calls it, on the test app's broker: what
// "the processor already did it" means in a test that builds the state a crash
// or an outage leaves behind.
import { randomBytes } from "node:crypto";
import type { PaymentOutcome, PaymentsActions } from "../../shared/contracts/payments";
import type { TestApp } from "../setup/app";

type Params<A extends keyof PaymentsActions> = PaymentsActions[A]["params"];

export interface SandboxPayments {
	/** Vaults and verifies the card on the MID (as a checkout's step 3 does); its token. */
	tokenize(card: { pan: string; expiry: string }, midId: number): Promise<{ cardToken: string }>;
	charge(request: Params<"payments.charge">): Promise<PaymentOutcome>;
	refund(request: Params<"payments.refund">): Promise<PaymentOutcome>;
	lookup(idempotencyKey: string): Promise<PaymentOutcome | null>;
}

export function sandboxPayments(app: TestApp): SandboxPayments {
	const call = <A extends keyof PaymentsActions>(action: A, params: Params<A>) =>
		app.broker.call<PaymentsActions[A]["result"], Params<A>>(action, params);
	return {
		async tokenize(card, midId) {
			const attemptId = `co_${randomBytes(8).toString("hex")}`;
			const saved = await call("payments.saveCard", { midId, attemptId, card: { ...card, cvc: "123" } });
			if ("error" in saved) throw new Error(`the sandbox refused the card: ${saved.error}`);
			return saved;
		},
		charge: request => call("payments.charge", request),
		refund: request => call("payments.refund", request),
		lookup: idempotencyKey => call("payments.lookup", { idempotencyKey }),
	};
}
