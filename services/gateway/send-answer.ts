// Answers the gateway writes itself, outside moleculer-web's: errors, the
// method checks' 404 and 405, and requests Node's HTTP parser refused.
import type { IncomingMessage, ServerResponse } from "node:http";
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { ApiErrorType } from "../../shared/errors";
import { CORS } from "./cors";
import { type HttpAnswer, jsonError } from "./http-errors";
import type { Locals } from "./locals";
import type { GatewayRequest } from "./request-params";

export function requestPath(req: GatewayRequest): string {
	return (req.originalUrl ?? req.url ?? "").split("?")[0];
}

/** Writes an answer the gateway made itself, with CORS headers outside /admin (error answers included). */
export function sendAnswer(gateway: Pick<Locals, "writeCorsHeaders">, req: IncomingMessage, res: ServerResponse, answer: HttpAnswer): void {
	if (res.headersSent) return void res.end();
	if (!requestPath(req as GatewayRequest).startsWith("/admin") && !res.getHeader("Access-Control-Allow-Origin")) {
		gateway.writeCorsHeaders({ cors: CORS }, req, res, false);
	}
	for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
	res.setHeader("Content-Type", answer.contentType);
	res.writeHead(answer.status);
	res.end(answer.body);
}

/** Node's answer to a request it could not parse, as JSON: 431 for oversized headers, 408 for a late one, 400 otherwise. */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
	// As Node does: no answer on a dead socket, nor in the middle of another answer on it.
	const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
	if (err.code === "ECONNRESET" || !socket.writable || answering) return void socket.destroy();
	const answer =
		err.code === "HPE_HEADER_OVERFLOW"
			? jsonError("HEADERS_TOO_LARGE", 431, "Request headers are larger than the limit")
			: err.code === "ERR_HTTP_REQUEST_TIMEOUT"
				? jsonError("REQUEST_TIMEOUT", 408, "The request did not arrive in time")
				: jsonError(ApiErrorType.BadRequest, 400, "Malformed HTTP request");
	answerOnSocket(socket, answer);
}

/** Writes a whole answer on a socket no HTTP response object owns, and closes it. */
export function answerOnSocket(socket: Duplex, answer: HttpAnswer): void {
	const reason = STATUS_CODES[answer.status] ?? "";
	socket.end(
		`HTTP/1.1 ${answer.status} ${reason}\r\nContent-Type: ${answer.contentType}\r\nContent-Length: ${Buffer.byteLength(answer.body)}\r\nConnection: close\r\n\r\n${answer.body}`,
	);
}
