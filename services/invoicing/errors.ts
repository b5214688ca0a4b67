// Every invoicing error that reaches HTTP, and what it answers: another
// account's document, or a link whose signature does not match, is not found.
import { domainErrors, type ErrorTable } from "../../shared/action";
import { ApiErrorType } from "../../shared/errors";
import { DocumentError } from "./document-reads";

export const INVOICING_ERRORS: ErrorTable<DocumentError> = {
	[DocumentError.InvoiceNotFound]: { type: ApiErrorType.NotFound, message: "Invoice not found" },
	[DocumentError.CreditNoteNotFound]: { type: ApiErrorType.NotFound, message: "Credit note not found" },
};

export const invoicingErrors = domainErrors(INVOICING_ERRORS);
