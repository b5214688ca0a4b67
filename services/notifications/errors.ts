// The notifications service's domain errors, and the HTTP answer of each.
import type { ErrorTable } from "../../shared/action";
import { ApiErrorType } from "../../shared/errors";

export enum NotificationsError {
	UnknownDelivery = "UNKNOWN_DELIVERY",
}

/** What the admin API answers for each error. */
export const NOTIFICATIONS_ERRORS: ErrorTable<NotificationsError> = {
	[NotificationsError.UnknownDelivery]: { type: ApiErrorType.NotFound, message: "No webhook delivery with this event id" },
};
