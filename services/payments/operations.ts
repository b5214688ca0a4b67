// The payments service's actions: save a card (vault it, then verify it on
// the MID's processor), and move money by the card's token. Each operation goes
// through the ledger under our idempotency key, so a repeat moves no money.
import {
	type AwaitingBuyer,
	type CardDeclined,
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
import type { Processor } from "./processors";

/** The answer for a MID without a processor it may use: a refusal by that MID, recorded nowhere (nothing was asked). */
const noProcessor: PaymentOutcome = {
	status: "DECLINED",
	processorTransactionId: null,
	processorReference: null,
	reason: NO_PROCESSOR_REASON,
	hardDecline: false,
};

const declined = (reason: string): ConnectorOutcome => ({ status: "DECLINED", reference: null, reason, hardDecline: false });

/** How the connector finds out what a call that died did; `chargeReference`: a refund's charge. */
function resumption(processor: Processor, chargeReference?: string): Resumption {
	return {
		resume: op =>
			processor.connector.lookup({ idempotencyKey: op._id, kind: op.kind, mid: processor.mid, reference: op.reference, chargeReference }),
		decidingMs: processor.decidingMs,
	};
}

/** How the connector decides one operation. */
function decision(processor: Processor, decide: Decision["decide"], chargeReference?: string): Decision {
	return { ...resumption(processor, chargeReference), decide };
}

/** A decision made without a processor (what it acts on does not exist): recorded, so a repeat answers the same. */
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
	processor: Processor,
	kind: OperationDoc["kind"],
	p: Pick<MoneyParams, "cardToken" | "amount"> & { currency: string | null },
	initiator: OperationDoc["initiator"],
): OperationRecord => ({
	kind,
	initiator,
	midId: processor.mid.midId,
	processor: processor.name,
	cardToken: p.cardToken,
	amount: p.amount,
	currency: p.currency,
	target: null,
});

export async function saveCard(
	deps: PaymentsDeps,
	input: PaymentsActions["payments.saveCard"]["params"],
): Promise<{ cardToken: string } | SaveCardError | CardDeclined> {
	const processor = await deps.processors.processorFor(input.midId);
	if (!processor) return SaveCardError.NoProcessor;
	const cardToken = await deps.vault.store({ pan: input.card.pan, expiry: input.card.expiry });
	const key = `${input.attemptId}:verify`;
	const record = moneyRecord(processor, "verify", { cardToken, amount: 0, currency: null }, "customer");
	const outcome = await withRetries(() =>
		deps.ledger.once(
			key,
			record,
			// The card is in hand: verified as it came, not read back from the vault.
			decision(processor, remember =>
				processor.connector.verify(
					{
						idempotencyKey: key,
						mid: processor.mid,
						card: { cardToken, pan: input.card.pan, expiry: input.card.expiry },
						cvc: input.card.cvc,
					},
					remember,
				),
			),
		),
	);
	if (outcome.status === "ERROR") return SaveCardError.ProcessorError;
	if (outcome.status === "APPROVED") return { cardToken };
	return { error: SaveCardError.CardNotVerified, declineReason: outcome.reason, hardDecline: outcome.hardDecline };
}

export async function charge(deps: PaymentsDeps, input: PaymentsActions["payments.charge"]["params"]): Promise<PaymentOutcome> {
	const key = input.idempotencyKey;
	const processor = await deps.processors.processorFor(input.midId);
	// A repeat of a key asked before its MID lost its processor (a renewal whose first answer is late) answers that key's
	// outcome, never a refusal that would let a retry charge the period again under a new key.
	if (!processor) return (await deps.ledger.recorded(key)) ?? noProcessor;
	const at = input.at ? new Date(input.at) : undefined;
	const { amount, currency, initiator, networkTransactionId } = input;
	return deps.ledger.once(
		key,
		moneyRecord(processor, "charge", input, initiator),
		decision(processor, (remember: Remember) =>
			withCard(deps, input.cardToken, card =>
				processor.connector.charge(
					{ idempotencyKey: key, mid: processor.mid, card, amount, currency, initiator, at, networkTransactionId },
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
	const processor = await deps.processors.processorFor(input.midId);
	if (!processor) return noProcessor;
	const key = input.idempotencyKey;
	const challengeUntil = new Date(input.challengeUntil);
	return deps.ledger.pay(
		key,
		moneyRecord(processor, input.kind, input, "customer"),
		{
			...resumption(processor),
			decide: remember =>
				withCard(deps, input.cardToken, card =>
					processor.connector.pay(
						{
							idempotencyKey: key,
							mid: processor.mid,
							card,
							amount: input.amount,
							currency: input.currency,
							kind: input.kind,
							challengeUntil,
							authenticate: input.authenticate ?? "WHEN_REQUIRED",
							at: input.at ? new Date(input.at) : undefined,
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
			const processor = await processorOfOperation(deps, op);
			if (!processor || (op.kind !== "charge" && op.kind !== "authorize" && op.kind !== "setup")) return null;
			const kind = op.kind;
			return found =>
				processor.connector.afterChallenge({ idempotencyKey: found._id, kind, mid: processor.mid, reference: found.reference });
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

/** The processor an operation was made on, if the MID still uses it. */
async function processorOfOperation(deps: PaymentsDeps, op: OperationDoc): Promise<Processor | null> {
	if (op.midId === null) return null;
	const processor = await deps.processors.processorFor(op.midId);
	return processor && processor.name === op.processor ? processor : null;
}

/** The approved operation a capture, void or refund acts on, with its processor; or the reason it cannot. */
async function targetOf(
	deps: PaymentsDeps,
	processorTransactionId: number,
	kinds: OperationDoc["kind"][],
	missing: string,
): Promise<{ target: OperationDoc; processor: Processor } | string> {
	const target = await deps.ledger.operationOf(processorTransactionId);
	if (!target || !kinds.includes(target.kind) || target.outcome?.status !== "APPROVED" || target.midId === null) return missing;
	const processor = await deps.processors.processorFor(target.midId);
	// The MID's processor changed since: the operation stays with the processor that made it.
	if (!processor || processor.name !== target.processor) return NO_PROCESSOR_REASON;
	return { target, processor };
}

/** Captures, voids and refunds: recorded under their key, acting on their target's processor object. */
async function onTarget(
	deps: PaymentsDeps,
	key: string,
	kind: "capture" | "void" | "refund",
	amount: number,
	found: { target: OperationDoc; processor: Processor } | string,
	act: (processor: Processor, target: OperationDoc, remember: Remember) => Promise<ConnectorOutcome>,
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
	const { target, processor } = found;
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
		decision(processor, remember => act(processor, target, remember), chargeReference),
	);
}

export async function capture(deps: PaymentsDeps, input: PaymentsActions["payments.capture"]["params"]): Promise<PaymentOutcome> {
	const found = await targetOf(deps, input.authorizationId, ["authorize"], "authorization_not_found");
	return onTarget(deps, input.idempotencyKey, "capture", input.amount, found, (processor, target) =>
		processor.connector.capture({
			idempotencyKey: input.idempotencyKey,
			mid: processor.mid,
			reference: target.outcome!.processorReference!,
			amount: input.amount,
			currency: target.currency ?? "",
		}),
	);
}

export async function voidHold(deps: PaymentsDeps, input: PaymentsActions["payments.void"]["params"]): Promise<PaymentOutcome> {
	const found = await targetOf(deps, input.authorizationId, ["authorize"], "authorization_not_found");
	return onTarget(deps, input.idempotencyKey, "void", 0, found, (processor, target) =>
		processor.connector.void({ idempotencyKey: input.idempotencyKey, mid: processor.mid, reference: target.outcome!.processorReference! }),
	);
}

export async function refund(deps: PaymentsDeps, input: PaymentsActions["payments.refund"]["params"]): Promise<PaymentOutcome> {
	const found = await targetOf(deps, input.processorTransactionId, ["charge", "capture"], "charge_not_found");
	return onTarget(deps, input.idempotencyKey, "refund", input.amount, found, (processor, target, remember) =>
		processor.connector.refund(
			{
				idempotencyKey: input.idempotencyKey,
				mid: processor.mid,
				reference: target.outcome!.processorReference!,
				amount: input.amount,
				currency: target.currency ?? "",
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

/** How a recorded operation is looked up at its processor; null when its MID no longer uses that processor. */
async function resumptionOfOperation(deps: PaymentsDeps, op: OperationDoc): Promise<Resumption | null> {
	// Recorded without a processor (its target did not exist): nothing was asked of any.
	if (op.midId === null) return { resume: async () => null, decidingMs: 1000 };
	const processor = await processorOfOperation(deps, op);
	if (!processor) return null;
	const target = op.kind === "refund" && op.target ? await deps.db.operations.findById(op.target).lean() : null;
	return resumption(processor, target?.outcome?.processorReference ?? undefined);
}
