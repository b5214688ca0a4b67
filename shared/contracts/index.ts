// Every contract between services, typed once and imported by both sides:
// the actions one service calls on another, what they answer (a value, or
// `{error}` with the callee's error enum), and the events they send.
// shared/call.ts calls and emits by these types.
import type { AccountsActions, AccountsEvents } from "./accounts";
import type { BillingActions } from "./billing";
import type { DashboardActions } from "./dashboard";
import type { InvoicingActions } from "./invoicing";
import type { MetricsActions } from "./metrics";
import type { NotificationsActions } from "./notifications";
import type { PaymentsActions } from "./payments";
import type { PortalActions } from "./portal";
import type { RuntimeEvents } from "./runtime";
import type { SessionsActions } from "./sessions";
import type { UsageActions } from "./usage";

export type Actions = AccountsActions &
	BillingActions &
	DashboardActions &
	InvoicingActions &
	MetricsActions &
	NotificationsActions &
	PaymentsActions &
	PortalActions &
	SessionsActions &
	UsageActions;
export type ActionName = keyof Actions;

export type Events = AccountsEvents & RuntimeEvents;
export type EventName = keyof Events;
