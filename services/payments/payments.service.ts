// The card vault and the processors. After the checkout decrypts a card, this
// is the only service that holds its number: it seals it (vault/vault.ts), and
// every payment operation goes through its ledger (ledger/) to the MID's
// connector (processors.ts). Billing and refunds see card tokens only.
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { domainAction, errorAsValue, idempotent } from "../../shared/action";
import type { PaymentsActions } from "../../shared/contracts/payments";
import { dbMixin } from "../../shared/db.mixin";
import { adyenNotification } from "./adyen-notifications";
import { adyenReturn } from "./adyen-returns";
import type { PaymentsDeps } from "./deps";
import { sandboxNotices, sandboxNoticesDone, submitDisputeEvidence } from "./disputes";
import { createPaymentsModels, type PaymentsDb } from "./models";
import { afterChallenge, capture, charge, chooseSandboxChallenge, firstPayment, lookup, refund, saveCard, voidHold } from "./operations";
import { listSandboxOperations } from "./sandbox-operations";
import { schemas } from "./schemas";
import { stripeEvent } from "./stripe-events";
import { type CredentialKeys, storeCredentials } from "./vault/credentials";
import { startPayments } from "./wiring";

interface Locals {
	db: PaymentsDb;
	deps: PaymentsDeps;
	credentialKeys: CredentialKeys;
}

const PaymentsService: ServiceSchema<ServiceSettingSchema, Record<string, never>, Locals> = {
	name: "payments",
	mixins: [dbMixin("payments", createPaymentsModels)],

	actions: {
		saveCard: domainAction(schemas.saveCard, saveCard, errorAsValue),
		charge: domainAction(schemas.charge, charge),
		firstPayment: domainAction(schemas.firstPayment, firstPayment),
		// Reads the processor and records once: safe to retry.
		afterChallenge: idempotent(domainAction(schemas.lookup, afterChallenge)),
		sandboxChallenge: domainAction(schemas.sandboxChallenge, chooseSandboxChallenge),
		capture: domainAction(schemas.capture, capture),
		void: domainAction(schemas.void, voidHold),
		refund: domainAction(schemas.refund, refund),
		// A read, and never moves money: safe to retry.
		lookup: idempotent(domainAction(schemas.lookup, lookup)),
		sandboxOperations: idempotent(domainAction(schemas.sandboxOperations, listSandboxOperations)),
		// Reads; billing names what it applied in sandboxNoticesDone, which is safe to repeat.
		sandboxNotices: idempotent(domainAction(schemas.sandboxNotices, sandboxNotices)),
		sandboxNoticesDone: idempotent(domainAction(schemas.sandboxNoticesDone, sandboxNoticesDone)),
		submitDisputeEvidence: domainAction(schemas.submitDisputeEvidence, submitDisputeEvidence, errorAsValue),
		// Verifies and reads; writes nothing: safe to retry.
		stripeEvent: idempotent(domainAction(schemas.stripeEvent, stripeEvent, errorAsValue)),
		// Verifies, keeps what Adyen did with our operations once each (a repeat keeps the first): safe to retry.
		adyenNotification: idempotent(domainAction(schemas.adyenNotification, adyenNotification, errorAsValue)),
		// Keeps the buyer's redirectResult once (a repeat keeps the first) and moves no money: safe to retry.
		adyenReturn: idempotent(domainAction(schemas.adyenReturn, adyenReturn)),
		// What the gateway seals a MID's processor key to before it crosses the transporter (vault/credentials.ts).
		credentialsKey: {
			params: schemas.none,
			handler() {
				return { publicJwk: this.credentialKeys.publicJwk };
			},
		},
		storeCredentials: {
			params: schemas.storeCredentials,
			async handler(ctx: Context<PaymentsActions["payments.storeCredentials"]["params"]>) {
				return errorAsValue(await storeCredentials(this.db, this.credentialKeys, ctx.params, new Date()));
			},
		},
	},

	async started() {
		const started = await startPayments(this.broker, this.db, this.logger);
		this.credentialKeys = started.credentialKeys;
		this.deps = started.deps;
	},
};

export default PaymentsService;
