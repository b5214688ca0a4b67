// The PDF of an invoice or credit note, made with pdfkit (a plain JavaScript
// library: no browser in billing) on request, never when it is issued. The
// standard Helvetica covers the languages offered (WinAnsi: € and accents).
import PDFDocument from "pdfkit";
import type { Party } from "../../shared/contracts/invoicing";
import type { DocumentText } from "./document-text";

const COLUMNS = [
	{ x: 50, width: 170, align: "left" },
	{ x: 220, width: 35, align: "right" },
	{ x: 255, width: 65, align: "right" },
	{ x: 320, width: 45, align: "right" },
	{ x: 365, width: 60, align: "right" },
	{ x: 425, width: 55, align: "right" },
	{ x: 480, width: 65, align: "right" },
] as const;

function row(pdf: PDFKit.PDFDocument, cells: string[], y: number, bold = false): number {
	pdf.font(bold ? "Helvetica-Bold" : "Helvetica").fontSize(9);
	const heights = cells.map((cell, i) => pdf.heightOfString(cell, { width: COLUMNS[i].width }));
	cells.forEach((cell, i) => {
		pdf.text(cell, COLUMNS[i].x, y, { width: COLUMNS[i].width, align: COLUMNS[i].align });
	});
	return y + Math.max(...heights) + 6;
}

function party(pdf: PDFKit.PDFDocument, heading: string, who: Party, taxIdLabel: string, x: number, y: number): void {
	pdf.font("Helvetica-Bold").fontSize(10).text(heading, x, y);
	const lines = [who.name, who.address, who.email, who.taxId ? `${taxIdLabel}: ${who.taxId}` : null].filter(Boolean) as string[];
	pdf
		.font("Helvetica")
		.fontSize(10)
		.text(lines.join("\n"), x, y + 14, { width: 230 });
}

export function documentPdf(text: DocumentText): Promise<Buffer> {
	const pdf = new PDFDocument({ size: "A4", margin: 50, info: { Title: `${text.title} ${text.number}` }, lang: text.language });
	const chunks: Buffer[] = [];
	pdf.on("data", chunk => chunks.push(chunk));
	const done = new Promise<Buffer>((resolve, reject) => {
		pdf.on("end", () => resolve(Buffer.concat(chunks)));
		pdf.on("error", reject);
	});
	const l = text.labels;
	pdf.font("Helvetica-Bold").fontSize(18).text(`${text.title} ${text.number}`, 50, 50);
	pdf.font("Helvetica").fontSize(10).text(`${l.date}: ${text.date}`, 50, 76);
	if (text.refersTo) pdf.text(`${l.refersTo}: ${text.refersTo}`, 50, 90);
	party(pdf, l.seller, text.seller, l.taxId, 50, 115);
	party(pdf, l.buyer, text.buyer, l.taxId, 310, 115);
	let y = row(pdf, [l.description, l.quantity, l.unitPrice, l.taxRate, l.net, l.tax, l.amount], 210, true);
	for (const line of text.lines) {
		const description = line.period ? `${line.description}\n${line.period}` : line.description;
		y = row(pdf, [description, line.quantity, line.unitPrice, line.taxRate, line.net, line.tax, line.gross], y);
	}
	y += 10;
	for (const [label, value] of text.totals) {
		pdf.font("Helvetica").fontSize(10).text(label, 300, y, { width: 150 });
		pdf.text(value, 450, y, { width: 95, align: "right" });
		y += 16;
	}
	pdf.fontSize(9).text(text.note, 50, y + 10);
	y += 40;
	pdf.font("Helvetica-Bold").fontSize(10).text(l.payment, 50, y);
	for (const [label, value] of text.payment) {
		y += 14;
		pdf.font("Helvetica").fontSize(9).text(`${label}: ${value}`, 50, y);
	}
	pdf.end();
	return done;
}
