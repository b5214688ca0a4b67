// postinstall: build the pinned Mailpit (a real SMTP server with an HTTP API to read what it
// received, and a web UI) from its Go module into .mailpit/, with the machine's Go, through
// the Go module proxy. The email tests and `npm start`'s sandbox run it (dev/mailpit.ts finds it).
// Best effort only: it must never fail `npm install`.
import { join } from "node:path";
import { builtModuleVersion, installGoTool, repo } from "./go-tool.mjs";

const binary = join(repo, ".mailpit", "mailpit");

installGoTool({
	tag: "[mailpit]",
	what: "Mailpit",
	module: "github.com/axllent/mailpit",
	version: "v1.33.1",
	folder: ".mailpit",
	goVersion: "1.26", // its go.mod asks for Go 1.26
	envVar: "MAILPIT_BIN",
	orAnother: "or set MAILPIT_BIN to a mailpit binary",
	neededBy: "the email tests and npm start's emails need it",
	duration: "about 35 s with a cold Go cache, seconds with a warm one",
	/** The module version Go wrote into the binary: a go-install build does not report it itself. */
	installedVersion: () => builtModuleVersion(binary, "github.com/axllent/mailpit"),
});
