export enum NotificationsError {
	UnknownDelivery = "UNKNOWN_DELIVERY",
}
