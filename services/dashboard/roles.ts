// What each dashboard role may do. A viewer reads; an operator also moves
// money and changes subscriptions (refund, unsubscribe, card update links,
// webhook redelivery, the sandbox test clock).
import type { DashboardRole } from "../../shared/contracts/dashboard";

export type Role = DashboardRole;

export const ROLES: Role[] = ["viewer", "operator"];

export function mayChange(role: Role): boolean {
	return role === "operator";
}
