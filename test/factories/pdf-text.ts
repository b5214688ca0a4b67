// Reads a PDF's text back with Mozilla's PDF reader (pdfjs-dist), in a child Node
// process: pdfjs-dist is an ES module, which jest's CommonJS runtime does not load.
import { execFile } from "node:child_process";
import path from "node:path";

// pdfjs-dist 6 uses Promise.withResolvers (Node 22): given here for Node 20, before it loads.
const SCRIPT = `
Promise.withResolvers ??= () => { let resolve, reject; const promise = new Promise((y, n) => { resolve = y; reject = n; }); return { promise, resolve, reject }; };
const { getDocument } = await import("pdfjs-dist/legacy/build/pdf.mjs");
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const pdf = await getDocument({ data: new Uint8Array(Buffer.concat(chunks)), verbosity: 0 }).promise;
const pages = [];
for (let n = 1; n <= pdf.numPages; n++) {
	const content = await (await pdf.getPage(n)).getTextContent();
	pages.push(content.items.map(item => item.str).join(" "));
}
process.stdout.write(JSON.stringify({ pages: pdf.numPages, text: pages.join("\\n") }));
`;

/** The PDF's page count and its text, its items joined by spaces. */
export function pdfText(pdf: Buffer): Promise<{ pages: number; text: string }> {
	return new Promise((resolve, reject) => {
		const child = execFile(
			process.execPath,
			["--input-type=module", "-e", SCRIPT],
			{ cwd: path.resolve(__dirname, "../.."), maxBuffer: 10_000_000 },
			(err, stdout, stderr) => (err ? reject(new Error(`pdfjs: ${stderr || err.message}`)) : resolve(JSON.parse(stdout))),
		);
		child.stdin!.end(pdf);
	});
}
