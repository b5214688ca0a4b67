// The page a buyer's signed link opens: plain, accessible HTML (one table with
// a caption and header cells), no script, every value escaped. On a phone the
// parties stack and each line's cells stack under their labels (data-label),
// so nothing is wider than the screen.
import type { Party } from "../../shared/contracts/invoicing";
import type { DocumentText } from "./document-text";

const escapeHtml = (text: string) =>
	text.replace(/[&<>"']/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);

/** A landmark named by its heading: `id` is the heading's. */
function party(id: string, heading: string, who: Party, taxIdLabel: string): string {
	const rows = [who.name, who.address, who.email, who.taxId ? `${taxIdLabel}: ${who.taxId}` : null].filter(Boolean) as string[];
	const lines = rows.map(row => escapeHtml(row).replace(/\n/g, "<br>")).join("<br>");
	return `<section aria-labelledby="${id}"><h2 id="${id}">${escapeHtml(heading)}</h2><p>${lines}</p></section>`;
}

const STYLE = [
	"body{font-family:system-ui,sans-serif;font-size:1rem;line-height:1.4;max-width:48rem;margin:2rem auto;padding:0 1rem;color:#111;overflow-wrap:anywhere}",
	"table{border-collapse:collapse;width:100%;margin:1rem 0}caption{text-align:left;font-weight:600}",
	"th,td{padding:.4rem;border-bottom:1px solid #ccc;text-align:right}th[scope=row],th:first-child{text-align:left}",
	".parties{display:flex;flex-wrap:wrap;column-gap:3rem}",
	// A phone: the lines' header row is read, not shown; each cell is a row of its own, its label before its value.
	"@media (max-width:36rem){body{margin:1rem auto}",
	".lines thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)}",
	".lines tr,.lines th{display:block}.lines tbody th{border:0}",
	".lines td{display:flex;justify-content:space-between;gap:1rem;border:0;padding:.2rem .4rem}",
	".lines td::before{content:attr(data-label);text-align:left}.lines tbody tr{border-bottom:1px solid #ccc;padding-bottom:.4rem}}",
].join("");

export function documentHtml(text: DocumentText, pdfUrl: string): string {
	const l = text.labels;
	const [descriptionLabel, ...cellLabels] = [l.description, l.quantity, l.unitPrice, l.taxRate, l.net, l.tax, l.amount].map(escapeHtml);
	const head = [descriptionLabel, ...cellLabels].map(h => `<th scope="col">${h}</th>`);
	const rows = text.lines.map(line => {
		const description = line.period
			? `${escapeHtml(line.description)}<br><small>${escapeHtml(line.period)}</small>`
			: escapeHtml(line.description);
		const cells = [line.quantity, line.unitPrice, line.taxRate, line.net, line.tax, line.gross].map(
			(c, i) => `<td data-label="${cellLabels[i]}">${escapeHtml(c)}</td>`,
		);
		return `<tr><th scope="row">${description}</th>${cells.join("")}</tr>`;
	});
	const totals = text.totals.map(([label, value]) => `<tr><th scope="row">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`);
	const payment = text.payment.map(([label, value]) => `<dt>${escapeHtml(label)}</dt><dd>${escapeHtml(value)}</dd>`);
	return `<!doctype html>
<html lang="${text.language}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">
<title>${escapeHtml(`${text.title} ${text.number}`)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>${escapeHtml(text.title)} ${escapeHtml(text.number)}</h1>
<p>${escapeHtml(l.date)}: ${escapeHtml(text.date)}${text.refersTo ? `<br>${escapeHtml(l.refersTo)}: ${escapeHtml(text.refersTo)}` : ""}</p>
<div class="parties">${party("seller", l.seller, text.seller, l.taxId)}${party("buyer", l.buyer, text.buyer, l.taxId)}</div>
<table class="lines"><caption>${escapeHtml(text.title)} ${escapeHtml(text.number)}</caption><thead><tr>${head.join("")}</tr></thead><tbody>${rows.join("")}</tbody></table>
<table aria-label="${escapeHtml(l.gross)}"><tbody>${totals.join("")}</tbody></table>
<p>${escapeHtml(text.note)}</p>
<h2>${escapeHtml(l.payment)}</h2><dl>${payment.join("")}</dl>
<p><a href="${escapeHtml(pdfUrl)}">PDF</a></p>
</main>
</body>
</html>
`;
}
