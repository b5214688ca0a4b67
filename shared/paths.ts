// The project's root folder, found from this file whether it runs from the
// sources (tsx, ts-jest) or compiled into dist/.
import { existsSync } from "node:fs";
import path from "node:path";

function findRoot(start: string): string {
	let dir = start;
	while (!existsSync(path.join(dir, "package.json"))) {
		const parent = path.dirname(dir);
		if (parent === dir) throw new Error(`No package.json above ${start}`);
		dir = parent;
	}
	return dir;
}

export const projectRoot = findRoot(__dirname);
