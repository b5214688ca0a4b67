import type { Logger } from "moleculer";
import type { WebhookTarget } from "../../shared/contracts/accounts";
import type { Schedule } from "../../shared/schedule";
import type { NotificationsDb } from "./models";

export interface DeliverySettings {
	timeoutMs: number;
	retryBaseMs: number;
	retryHours: number;
	sandboxRetryHours: number;
	/** An event of an account without a webhook URL is sent if it gets one within this many days. */
	waitDays: number;
	/** Zone of the events' local createdAt. */
	timeZone: string;
}

export interface NotificationsDeps {
	db: NotificationsDb;
	/** Deliveries by the time their next attempt is due. */
	attempts: Schedule<string>;
	/** This node's id: leases and attempt records name it. */
	nodeId: string;
	settings: DeliverySettings;
	webhookTarget(accountId: number): Promise<WebhookTarget>;
	logger: Logger;
	now: () => Date;
}
