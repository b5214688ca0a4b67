// The links buyers open their invoices and credit notes by, without a token
// (docs/invoices.md#links): the document's id and an HMAC-SHA256 of its kind
// and id under INVOICE_LINK_KEY. Without the key no link can be made or
// guessed; a changed id or signature matches nothing and reads as a 404.
import { createHmac, timingSafeEqual } from "node:crypto";
import type { LinkOf } from "./document-views";
import type { DocumentKind } from "./numbering";

const PATHS: Record<DocumentKind, string> = { invoice: "invoices", credit_note: "credit-notes" };

export interface DocumentLinks {
	linkOf: LinkOf;
	/** Whether `signature` is the one this node gives the document. */
	verify(kind: DocumentKind, id: number, signature: string): boolean;
}

export function createDocumentLinks(key: Buffer, publicBaseUrl: string | undefined): DocumentLinks {
	const sign = (kind: DocumentKind, id: number) => createHmac("sha256", key).update(`${kind}:${id}`).digest("base64url");
	return {
		linkOf: (kind, id) => `${publicBaseUrl ?? ""}/api/buyer/${PATHS[kind]}/${id}/${sign(kind, id)}`,
		verify(kind, id, signature) {
			const expected = Buffer.from(sign(kind, id));
			const given = Buffer.from(signature);
			return given.length === expected.length && timingSafeEqual(given, expected);
		},
	};
}
