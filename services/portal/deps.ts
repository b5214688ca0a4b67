// What the portal service's domain functions get: its database, typed calls to billing, accounts, invoicing and
// sessions, and the clock.
import type { Call } from "../../shared/call";
import type { PortalDb } from "./models";

export interface PortalDeps {
	db: PortalDb;
	call: Call;
	now: () => Date;
}
