// Every metrics error that reaches HTTP, and what it answers
// (docs/api.md#get-apimetrics-subscription-metrics).
import { domainErrors, type ErrorTable } from "../../shared/action";
import { ApiErrorType } from "../../shared/errors";
import { MAX_METRICS_DAYS, MetricsError } from "./metrics-query";

const METRICS_ERRORS: ErrorTable<MetricsError> = {
	[MetricsError.BadDate]: {
		type: ApiErrorType.BadRequest,
		message: "from and to must be real days (YYYY-MM-DD), from 1970-01-01 on",
	},
	[MetricsError.FromAfterTo]: { type: ApiErrorType.BadRequest, message: "from must not be after to" },
	[MetricsError.TooLong]: {
		type: ApiErrorType.BadRequest,
		message: `from and to may span at most ${MAX_METRICS_DAYS} days, both included (three years); ask for the rest in another request`,
	},
	[MetricsError.ProductAndMid]: { type: ApiErrorType.BadRequest, message: "Send productId or midId, not both" },
	[MetricsError.ProductNotFound]: { type: ApiErrorType.NotFound, message: "Product not found" },
	[MetricsError.MidNotFound]: { type: ApiErrorType.NotFound, message: "Merchant account not found" },
};

export const metricsErrors = domainErrors(METRICS_ERRORS);
