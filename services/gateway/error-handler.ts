// The one place a failed request is answered (moleculer-web's onError): the
// checkout's endpoints in the SDK's shape, every other in the API's.
import type { IncomingMessage, ServerResponse } from "node:http";
import { endpointFor } from "./endpoints";
import { toCheckoutAnswer, toHttpAnswer } from "./http-errors";
import type { Locals } from "./locals";
import type { GatewayRequest } from "./request-params";
import { requestPath, sendAnswer } from "./send-answer";

type Gateway = Pick<Locals, "resolveAlias" | "writeCorsHeaders"> & { logger: { error(...args: unknown[]): void } };

export function onError(this: Gateway, req: IncomingMessage, res: ServerResponse, err: unknown): void {
	const endpoint = endpointFor(aliasOf(this, req as GatewayRequest)?.action);
	const answer = endpoint?.checkoutErrors ? toCheckoutAnswer(err) : toHttpAnswer(err);
	if (answer.unexpected) this.logger.error("Request failed:", (err as Error)?.name, (err as Error)?.message);
	sendAnswer(this, req, res, answer);
}

/**
 * The alias a failed request was for. A body that fails to parse fails before
 * the alias is attached to the request, so it is resolved again; a path that
 * is not valid percent-encoding cannot be resolved (moleculer-web throws), and
 * an error handler that throws would crash the process.
 */
function aliasOf(gateway: Pick<Locals, "resolveAlias">, req: GatewayRequest): { action?: string } | undefined {
	if (req.$alias) return req.$alias;
	try {
		return gateway.resolveAlias(requestPath(req).replace(/\/$/, ""), req.method)?.alias;
	} catch {
		return undefined;
	}
}
