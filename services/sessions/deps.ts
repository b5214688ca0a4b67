import type { SessionsDb } from "./models";

export interface SessionsDeps {
	db: SessionsDb;
	now: () => Date;
}
