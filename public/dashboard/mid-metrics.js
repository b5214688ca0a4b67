// The operators' view (docs/dashboard.md#merchant-accounts): the subscription
// figures of each MID over the last 30 days, beside its health, from
// GET /dashboard/api/metrics?midId=N (one request per MID, the API's default
// range). One row per MID and currency; a MID with no figures says so.

import { moneyOfMinor } from "./money.js";
import { api, el, percent, table } from "./ui.js";

const COLUMNS = [
	["MID", r => r.name],
	["Currency", r => r.series?.currency ?? "–"],
	["MRR", r => (r.series ? moneyOfMinor(r.series.total.mrr, r.series.currency) : "no figures")],
	["Subscribers", r => r.series?.total.activeSubscribers ?? "–"],
	["Net new MRR", r => (r.series ? moneyOfMinor(r.series.total.netNewMrr, r.series.currency) : "–")],
	["Gross volume", r => (r.series ? moneyOfMinor(r.series.total.grossVolume, r.series.currency) : "–")],
	["Net volume", r => (r.series ? moneyOfMinor(r.series.total.netVolume, r.series.currency) : "–")],
	["Renewals", r => r.series?.total.renewalsAttempted ?? "–"],
	["Recovered", r => (r.series ? r.series.total.renewalsRecoveredByRetries + r.series.total.renewalsRecoveredByCardUpdate : "–")],
	["Lost", r => r.series?.total.renewalsLost ?? "–"],
	["Recovery rate", r => (r.series ? percent(r.series.total.recoveryRate) : "–")],
];

/** The section, filled in when the MIDs' answers come; `mids` are [id, name] pairs. */
export function midMetrics(mids) {
	const body = el("p", { role: "status" }, "Loading each MID's figures…");
	void Promise.all(mids.map(([midId]) => api("GET", `/metrics?midId=${midId}`))).then(
		answers => {
			const rows = answers.flatMap((answer, i) => {
				const name = `${mids[i][1]} (${mids[i][0]})`;
				return answer.series.length === 0 ? [{ name }] : answer.series.map(series => ({ name, series }));
			});
			const range = answers[0] ? `${answers[0].from} to ${answers[0].to}` : "";
			body.replaceWith(
				el("p", {}, `From ${range}: MRR and active subscribers at the range's end, the rest over it.`),
				table(COLUMNS, rows, "Subscription figures per MID", { className: "mid-metrics" }),
			);
		},
		err => {
			body.textContent = `The MIDs' figures could not be read: ${err.message}`;
			body.classList.add("error");
		},
	);
	return el(
		"section",
		{ class: "card", "aria-labelledby": "mid-metrics-title" },
		el("h2", { id: "mid-metrics-title" }, "Subscription figures per MID, last 30 days"),
		body,
	);
}
