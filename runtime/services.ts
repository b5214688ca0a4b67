// Every service the project has, by the name SERVICES uses.
import type { ServiceSchema } from "moleculer";
import AccountsService from "../services/accounts/accounts.service";
import BillingService from "../services/billing/billing.service";
import CheckoutService from "../services/checkout/checkout.service";
import DashboardService from "../services/dashboard/dashboard.service";
import GatewayService from "../services/gateway/gateway.service";
import InvoicingService from "../services/invoicing/invoicing.service";
import MetricsService from "../services/metrics/metrics.service";
import NotificationsService from "../services/notifications/notifications.service";
import PaymentsService from "../services/payments/payments.service";
import PortalService from "../services/portal/portal.service";
import RefundsService from "../services/refunds/refunds.service";
import SessionsService from "../services/sessions/sessions.service";
import UsageService from "../services/usage/usage.service";
import type { ServiceName } from "../shared/config";

export const serviceSchemas: Record<ServiceName, ServiceSchema> = {
	gateway: GatewayService as ServiceSchema,
	accounts: AccountsService as ServiceSchema,
	sessions: SessionsService as ServiceSchema,
	checkout: CheckoutService as ServiceSchema,
	payments: PaymentsService as ServiceSchema,
	billing: BillingService as ServiceSchema,
	invoicing: InvoicingService as ServiceSchema,
	refunds: RefundsService as ServiceSchema,
	notifications: NotificationsService as ServiceSchema,
	dashboard: DashboardService as ServiceSchema,
	metrics: MetricsService as ServiceSchema,
	portal: PortalService as ServiceSchema,
	usage: UsageService as ServiceSchema,
};
