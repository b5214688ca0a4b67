// The usage service's refusals of a whole request (docs/usage.md#errors); an
// event refused alone is answered in the batch's results (event-checks.ts).
import type { ErrorTable } from "../../shared/action";
import { ApiErrorType } from "../../shared/errors";

export enum UsageError {
	UnknownAccount = "USAGE_UNKNOWN_ACCOUNT",
	MeterExists = "METER_EXISTS",
	/** A sum, max or latest meter without its property, or a count meter with one. */
	MeterProperty = "METER_PROPERTY",
	UnknownCustomer = "USAGE_UNKNOWN_CUSTOMER",
}

export const USAGE_ERRORS: ErrorTable<UsageError> = {
	[UsageError.UnknownAccount]: { type: ApiErrorType.NotFound, message: "Account not found" },
	[UsageError.MeterExists]: { type: ApiErrorType.Conflict, message: "The account already has a meter with this code" },
	[UsageError.MeterProperty]: {
		type: ApiErrorType.BadRequest,
		message: "property is required for sum, max, unique_count and latest meters, and not allowed for count",
	},
	[UsageError.UnknownCustomer]: { type: ApiErrorType.NotFound, message: "Customer not found" },
};
