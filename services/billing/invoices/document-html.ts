// The page a buyer's signed link opens: plain, accessible HTML (one table with
// a caption and header cells), no script, every value escaped.
import type { Party } from "../documents/invoice";
import type { DocumentText } from "./document-text";

const escapeHtml = (text: string) =>
	text.replace(/[&<>"']/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);

function party(heading: string, who: Party, taxIdLabel: string): string {
	const rows = [who.name, who.address, who.email, who.taxId ? `${taxIdLabel}: ${who.taxId}` : null].filter(Boolean) as string[];
	return `<section><h2>${escapeHtml(heading)}</h2><p>${rows.map(row => escapeHtml(row).replace(/\n/g, "<br>")).join("<br>")}</p></section>`;
}

export function documentHtml(text: DocumentText, pdfUrl: string): string {
	const l = text.labels;
	const head = [l.description, l.quantity, l.unitPrice, l.taxRate, l.net, l.tax, l.amount].map(
		h => `<th scope="col">${escapeHtml(h)}</th>`,
	);
	const rows = text.lines.map(line => {
		const description = line.period
			? `${escapeHtml(line.description)}<br><small>${escapeHtml(line.period)}</small>`
			: escapeHtml(line.description);
		const cells = [line.quantity, line.unitPrice, line.taxRate, line.net, line.tax, line.gross].map(c => `<td>${escapeHtml(c)}</td>`);
		return `<tr><th scope="row">${description}</th>${cells.join("")}</tr>`;
	});
	const totals = text.totals.map(([label, value]) => `<tr><th scope="row">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`);
	const payment = text.payment.map(([label, value]) => `<dt>${escapeHtml(label)}</dt><dd>${escapeHtml(value)}</dd>`);
	return `<!doctype html>
<html lang="${text.language}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">
<title>${escapeHtml(`${text.title} ${text.number}`)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;color:#111}table{border-collapse:collapse;width:100%}th,td{padding:.4rem;border-bottom:1px solid #ccc;text-align:right}th[scope=row],caption{text-align:left}.parties{display:flex;gap:2rem}</style>
</head>
<body>
<main>
<h1>${escapeHtml(text.title)} ${escapeHtml(text.number)}</h1>
<p>${escapeHtml(l.date)}: ${escapeHtml(text.date)}${text.refersTo ? `<br>${escapeHtml(l.refersTo)}: ${escapeHtml(text.refersTo)}` : ""}</p>
<div class="parties">${party(l.seller, text.seller, l.taxId)}${party(l.buyer, text.buyer, l.taxId)}</div>
<table><caption>${escapeHtml(text.title)} ${escapeHtml(text.number)}</caption><thead><tr>${head.join("")}</tr></thead><tbody>${rows.join("")}</tbody></table>
<table><tbody>${totals.join("")}</tbody></table>
<p>${escapeHtml(text.note)}</p>
<h2>${escapeHtml(l.payment)}</h2><dl>${payment.join("")}</dl>
<p><a href="${escapeHtml(pdfUrl)}">PDF</a></p>
</main>
</body>
</html>
`;
}
