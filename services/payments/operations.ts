// The payments service's actions: save a card (vault it, then verify it on
// the MID's gateway), and move money by the card's token. Each operation goes
// through the ledger under our idempotency key, so a repeat moves no money.
import {
	type AwaitingBuyer,
	type MoneyParams,
	NO_PROCESSOR_REASON,
	type PaymentOutcome,
	type PaymentsActions,
	SaveCardError,
} from "../../shared/contracts/payments";
import { withRetries } from "../../shared/processor-retries";
import type { ConnectorOutcome, Remember, VaultCard } from "./connectors/connector";
import type { PaymentsDeps } from "./deps";
import type { Decision, OperationRecord, Resumption } from "./ledger/ledger";
import type { OperationDoc } from "./models";
import type { Gateway } from "./processors";

/** The answer for a MID without a gateway it may use: a refusal by that MID, recorded nowhere (nothing was asked). */
const noProcessor: PaymentOutcome = {
	status: "DECLINED",
	processorTransactionId: null,
	processorReference: null,
	reason: NO_PROCESSOR_REASON,
	hardDecline: false,
};

const declined = (reason: string): ConnectorOutcome => ({ status: "DECLINED", reference: null, reason, hardDecline: false });

/** How the gateway finds out what a call that died did; `chargeReference`: a refund's charge. */
function resumption(gateway: Gateway, chargeReference?: string): Resumption {
	return {
		resume: op =>
			gateway.connector.lookup({ idempotencyKey: op._id, kind: op.kind, mid: gateway.mid, reference: op.reference, chargeReference }),
		decidingMs: gateway.decidingMs,
	};
}

/** How the gateway decides one operation. */
function decision(gateway: Gateway, decide: Decision["decide"], chargeReference?: string): Decision {
	return { ...resumption(gateway, chargeReference), decide };
}

/** A decision made without a gateway (what it acts on does not exist): recorded, so a repeat answers the same. */
function refusal(reason: string): Decision {
	return { decide: async () => declined(reason), resume: async () => null, decidingMs: 1000 };
}

/** The card for one operation, or the decline for a token the vault does not hold. */
async function withCard<T extends { status: string }>(
	deps: PaymentsDeps,
	cardToken: string,
	then: (card: VaultCard) => Promise<T>,
): Promise<T | ConnectorOutcome> {
	const card = await deps.vault.unseal(cardToken);
	return card ? then(card) : { ...declined("unknown_card"), hardDecline: true };
}

const moneyRecord = (
	gateway: Gateway,
	kind: OperationDoc["kind"],
	p: Pick<MoneyParams, "cardToken" | "amount"> & { currency: string | null },
	initiator: OperationDoc["initiator"],
): OperationRecord => ({
	kind,
	initiator,
	midId: gateway.mid.midId,
	processor: gateway.name,
	cardToken: p.cardToken,
	amount: p.amount,
	currency: p.currency,
	target: null,
});

export async function saveCard(
	deps: PaymentsDeps,
	input: PaymentsActions["payments.saveCard"]["params"],
): Promise<{ cardToken: string } | SaveCardError> {
	const gateway = await deps.processors.gatewayFor(input.midId);
	if (!gateway) return SaveCardError.NoProcessor;
	const cardToken = await deps.vault.store({ pan: input.card.pan, expiry: input.card.expiry });
	const key = `${input.attemptId}:verify`;
	const record = moneyRecord(gateway, "verify", { cardToken, amount: 0, currency: null }, "customer");
	const outcome = await withRetries(() =>
		deps.ledger.once(
			key,
			record,
			// The card is in hand: verified as it came, not read back from the vault.
			decision(gateway, remember =>
				gateway.connector.verify(
					{
						idempotencyKey: key,
						mid: gateway.mid,
						card: { cardToken, pan: input.card.pan, expiry: input.card.expiry },
						cvc: input.card.cvc,
					},
					remember,
				),
			),
		),
	);
	if (outcome.status === "ERROR") return SaveCardError.ProcessorError;
	return outcome.status === "APPROVED" ? { cardToken } : SaveCardError.CardNotVerified;
}

export async function charge(deps: PaymentsDeps, input: PaymentsActions["payments.charge"]["params"]): Promise<PaymentOutcome> {
	const gateway = await deps.processors.gatewayFor(input.midId);
	if (!gateway) return noProcessor;
	const key = input.idempotencyKey;
	const at = input.at ? new Date(input.at) : undefined;
	const { amount, currency, initiator, networkTransactionId } = input;
	return deps.ledger.once(
		key,
		moneyRecord(gateway, "charge", input, initiator),
		decision(gateway, (remember: Remember) =>
			withCard(deps, input.cardToken, card =>
				gateway.connector.charge(
					{ idempotencyKey: key, mid: gateway.mid, card, amount, currency, initiator, at, networkTransactionId },
					remember,
				),
			),
		),
	);
}

/** The checkout's first payment (a charge or a hold), the buyer present: the issuer may ask for a challenge first. */
export async function firstPayment(
	deps: PaymentsDeps,
	input: PaymentsActions["payments.firstPayment"]["params"],
): Promise<PaymentOutcome | AwaitingBuyer> {
	const gateway = await deps.processors.gatewayFor(input.midId);
	if (!gateway) return noProcessor;
	const key = input.idempotencyKey;
	const challengeUntil = new Date(input.challengeUntil);
	return deps.ledger.pay(
		key,
		moneyRecord(gateway, input.kind, input, "customer"),
		{
			...resumption(gateway),
			decide: remember =>
				withCard(deps, input.cardToken, card =>
					gateway.connector.pay(
						{
							idempotencyKey: key,
							mid: gateway.mid,
							card,
							amount: input.amount,
							currency: input.currency,
							kind: input.kind,
							challengeUntil,
							authenticate: input.authenticate ?? "WHEN_REQUIRED",
						},
						remember,
					),
				),
		},
		challengeUntil,
	);
}

/** A first payment after the buyer's challenge (docs/authentication.md). */
export function afterChallenge(deps: PaymentsDeps, input: { idempotencyKey: string }): Promise<PaymentOutcome | AwaitingBuyer | null> {
	return deps.ledger.afterChallenge(
		input.idempotencyKey,
		async op => {
			const gateway = await gatewayOfOperation(deps, op);
			if (!gateway || (op.kind !== "charge" && op.kind !== "authorize" && op.kind !== "setup")) return null;
			const kind = op.kind;
			return found => gateway.connector.afterChallenge({ idempotencyKey: found._id, kind, mid: gateway.mid, reference: found.reference });
		},
		op => resumptionOfOperation(deps, op),
	);
}

export async function chooseSandboxChallenge(
	deps: PaymentsDeps,
	input: PaymentsActions["payments.sandboxChallenge"]["params"],
): Promise<{ accepted: boolean }> {
	return { accepted: await deps.sandbox.chooseChallenge(input.challengeId, input.result) };
}

/** The gateway an operation was made on, if the MID still uses it. */
async function gatewayOfOperation(deps: PaymentsDeps, op: OperationDoc): Promise<Gateway | null> {
	if (op.midId === null) return null;
	const gateway = await deps.processors.gatewayFor(op.midId);
	return gateway && gateway.name === op.processor ? gateway : null;
}

/** The approved operation a capture, void or refund acts on, with its gateway; or the reason it cannot. */
async function targetOf(
	deps: PaymentsDeps,
	processorTransactionId: number,
	kinds: OperationDoc["kind"][],
	missing: string,
): Promise<{ target: OperationDoc; gateway: Gateway } | string> {
	const target = await deps.ledger.operationOf(processorTransactionId);
	if (!target || !kinds.includes(target.kind) || target.outcome?.status !== "APPROVED" || target.midId === null) return missing;
	const gateway = await deps.processors.gatewayFor(target.midId);
	// The MID's gateway changed since: the operation stays with the gateway that made it.
	if (!gateway || gateway.name !== target.processor) return NO_PROCESSOR_REASON;
	return { target, gateway };
}

/** Captures, voids and refunds: recorded under their key, acting on their target's gateway object. */
async function onTarget(
	deps: PaymentsDeps,
	key: string,
	kind: "capture" | "void" | "refund",
	amount: number,
	found: { target: OperationDoc; gateway: Gateway } | string,
	act: (gateway: Gateway, target: OperationDoc, remember: Remember) => Promise<ConnectorOutcome>,
): Promise<PaymentOutcome> {
	if (typeof found === "string") {
		const record: OperationRecord = {
			kind,
			initiator: "merchant",
			midId: null,
			processor: null,
			cardToken: null,
			amount,
			currency: null,
			target: null,
		};
		return deps.ledger.once(key, record, refusal(found));
	}
	const { target, gateway } = found;
	const record: OperationRecord = {
		kind,
		initiator: "merchant",
		midId: target.midId,
		processor: target.processor,
		cardToken: target.cardToken,
		amount,
		currency: target.currency,
		target: target._id,
	};
	const chargeReference = kind === "refund" ? (target.outcome?.processorReference ?? undefined) : undefined;
	return deps.ledger.once(
		key,
		record,
		decision(gateway, remember => act(gateway, target, remember), chargeReference),
	);
}

export async function capture(deps: PaymentsDeps, input: PaymentsActions["payments.capture"]["params"]): Promise<PaymentOutcome> {
	const found = await targetOf(deps, input.authorizationId, ["authorize"], "authorization_not_found");
	return onTarget(deps, input.idempotencyKey, "capture", input.amount, found, (gateway, target) =>
		gateway.connector.capture({
			idempotencyKey: input.idempotencyKey,
			mid: gateway.mid,
			reference: target.outcome!.processorReference!,
			amount: input.amount,
		}),
	);
}

export async function voidHold(deps: PaymentsDeps, input: PaymentsActions["payments.void"]["params"]): Promise<PaymentOutcome> {
	const found = await targetOf(deps, input.authorizationId, ["authorize"], "authorization_not_found");
	return onTarget(deps, input.idempotencyKey, "void", 0, found, (gateway, target) =>
		gateway.connector.void({ idempotencyKey: input.idempotencyKey, mid: gateway.mid, reference: target.outcome!.processorReference! }),
	);
}

export async function refund(deps: PaymentsDeps, input: PaymentsActions["payments.refund"]["params"]): Promise<PaymentOutcome> {
	const found = await targetOf(deps, input.processorTransactionId, ["charge", "capture"], "charge_not_found");
	return onTarget(deps, input.idempotencyKey, "refund", input.amount, found, (gateway, target, remember) =>
		gateway.connector.refund(
			{
				idempotencyKey: input.idempotencyKey,
				mid: gateway.mid,
				reference: target.outcome!.processorReference!,
				amount: input.amount,
				cardToken: target.cardToken,
			},
			remember,
		),
	);
}

/** What became of a key whose answer was lost: its outcome, or null when no money moved (the key may be used again). */
export function lookup(deps: PaymentsDeps, input: { idempotencyKey: string }): Promise<PaymentOutcome | null> {
	return deps.ledger.lookup(input.idempotencyKey, op => resumptionOfOperation(deps, op));
}

/** How a recorded operation is looked up at its gateway; null when its MID no longer uses that gateway. */
async function resumptionOfOperation(deps: PaymentsDeps, op: OperationDoc): Promise<Resumption | null> {
	// Recorded without a gateway (its target did not exist): nothing was asked of any.
	if (op.midId === null) return { resume: async () => null, decidingMs: 1000 };
	const gateway = await gatewayOfOperation(deps, op);
	if (!gateway) return null;
	const target = op.kind === "refund" && op.target ? await deps.db.operations.findById(op.target).lean() : null;
	return resumption(gateway, target?.outcome?.processorReference ?? undefined);
}
