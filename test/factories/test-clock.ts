// The sandbox test clock moved to a customer's own dates (docs/api.md#the-accounts-now).
// The clock is the account's now and only moves forward, and a month is 28 to
// 31 days, so a test moves it to times read from its customers over the API,
// never to fixed day counts from the real now: right on any date.
//   - The API's date-times are local in TIME_ZONE without a zone designator;
//     in the hour a summer time ends, one names two instants, and the later is
//     taken, so a clock moved to a due time never stops before it.
import { DateTime } from "luxon";
import { config } from "../../shared/config";
import { formatDateTime } from "../../shared/time";
import type { TestApp } from "../setup/app";
import { admin, bearer, type TestMerchant } from "./merchant";

const HOUR_MS = 3_600_000;

/** The instant an API date-time (`2026-12-29T05:58:07.025`, local in TIME_ZONE) names; the later one when it names two. */
export function instantOf(localDateTime: string): Date {
	const at = DateTime.fromISO(localDateTime, { zone: config().timeZone });
	if (!at.isValid) throw new Error(`not an API date-time: ${localDateTime}`);
	const later = new Date(at.toMillis() + HOUR_MS);
	return formatDateTime(later) === localDateTime ? later : at.toJSDate();
}

/** Moves the account's test clock to `at`: what falls due until then runs, each at its own time (200 expected). */
export function clockTo(app: TestApp, merchant: Pick<TestMerchant, "accountId">, at: Date) {
	return admin(app).post(`/accounts/${merchant.accountId}/clock`, { advanceTo: at.toISOString() }).expect(200);
}

/** When the customer's next renewal (or retry) is due: its `nextRenewalTimestamp` (GET /api/customer/{id}). */
export async function nextRenewalOf(app: TestApp, merchant: TestMerchant, customerId: number): Promise<Date> {
	const res = await app.http().get(`/api/customer/${customerId}`).set(bearer(merchant)).expect(200);
	if (!res.body.nextRenewalTimestamp) throw new Error(`customer ${customerId} has no renewal due: ${JSON.stringify(res.body)}`);
	return instantOf(res.body.nextRenewalTimestamp);
}

/** Moves the account's test clock to the latest of the customers' next renewals (or retries), so each runs; that time. */
export async function clockToRenewalOf(app: TestApp, merchant: TestMerchant, ...customerIds: number[]): Promise<Date> {
	const dues = await Promise.all(customerIds.map(id => nextRenewalOf(app, merchant, id)));
	const at = new Date(Math.max(...dues.map(due => due.getTime())));
	await clockTo(app, merchant, at);
	return at;
}
