// Before moleculer-web runs anything: whether the request's method may reach
// a handler at all (methods.ts decides), and the answer when it may not.
import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiErrorType } from "../../shared/errors";
import { CORS } from "./cors";
import { jsonError } from "./http-errors";
import type { Locals } from "./locals";
import { decideMethod, routedPath, routeTable } from "./methods";
import { sendAnswer } from "./send-answer";

/** Answers a preflight, a 405 or a 404 itself and says true; false for a request its route is to handle. */
export function answeredByMethod(gateway: Locals, req: IncomingMessage, res: ServerResponse): boolean {
	const decision = decideMethod(
		req.method,
		routedPath(req.url ?? ""),
		routeTable((url, method) => gateway.resolveAlias(url, method)),
	);
	if (decision.kind === "route") return false;
	if (hasBody(req)) {
		// Answered without reading the body: the connection cannot carry another request after it.
		res.setHeader("Connection", "close");
		req.resume();
	}
	if (decision.kind === "preflight") {
		gateway.writeCorsHeaders({ cors: CORS }, req, res, true);
		res.writeHead(204, { "Content-Length": "0" }).end();
	} else if (decision.kind === "notAllowed") {
		sendAnswer(gateway, req, res, jsonError("METHOD_NOT_ALLOWED", 405, undefined, { Allow: decision.allow.join(", ") }));
	} else {
		sendAnswer(gateway, req, res, jsonError(ApiErrorType.NotFound, 404));
	}
	return true;
}

function hasBody(req: IncomingMessage): boolean {
	return (req.headers["content-length"] ?? "0") !== "0" || req.headers["transfer-encoding"] !== undefined;
}
