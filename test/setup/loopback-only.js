// Tests reach nothing outside this machine (issue 35): every TCP, TLS, HTTP
// and UDP connection a test process opens goes to a loopback address, or it
// is refused before any packet leaves. A test that forgets STRIPE_API_BASE
// fails with LOOPBACK_ONLY instead of calling Stripe.
//
// Plain CommonJS so that it loads without a compiler in three places: jest's
// workers (setupFiles in jest.config.js), and, through NODE_OPTIONS set by
// global-setup.ts, every Node process the tests start (services spawned with
// bin/node.ts, npm start, the cluster). net.Socket's connect is the one door
// of net, tls, http, https and fetch (undici); a host name other than
// localhost is refused before it is looked up, so no DNS query leaves either.
// Unix sockets and named pipes (a `path`) are local and pass.
"use strict";

const dgram = require("node:dgram");
const net = require("node:net");

const GUARD = Symbol.for("payment-tests.loopback-only");
const CODE = "LOOPBACK_ONLY";
const LOCAL_NAMES = new Set(["localhost", "localhost.", "ip6-localhost", "ip6-loopback"]);

/** Whether a host (a name or an IP literal, maybe in brackets) is this machine. */
function isLoopback(host) {
	if (host === undefined || host === null || host === "") return true; // Node's default host: localhost
	const name = String(host)
		.toLowerCase()
		.replace(/^\[(.*)\]$/, "$1");
	if (LOCAL_NAMES.has(name)) return true;
	const version = net.isIP(name);
	if (version === 4) return name.startsWith("127.") || name === "0.0.0.0";
	if (version === 6) {
		const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(name);
		if (mapped) return isLoopback(mapped[1]);
		return name === "::1" || name === "::" || /^0*:(0*:)*0*1$/.test(name);
	}
	return false;
}

function refusal(host, port) {
	const err = new Error(
		`Tests may connect to loopback addresses only: ${host}${port === undefined ? "" : `:${port}`} was refused before any packet left ` +
			"(test/setup/loopback-only.js). Point the service at a local server (STRIPE_API_BASE, MONGO_URL, a webhook receiver on 127.0.0.1).",
	);
	err.code = CODE;
	err.host = host;
	err.port = port;
	return err;
}

/** The host and port of Socket#connect's arguments, in each of its forms; a path is local. */
function targetOf(args) {
	let first = args[0];
	// net.connect and tls.connect pass their normalized [options, callback] pair.
	if (Array.isArray(first)) first = first[0];
	if (first !== null && typeof first === "object") return first.path ? null : { host: first.host, port: first.port };
	if (typeof first === "string" && Number.isNaN(Number(first))) return null; // connect(path[, callback])
	return { host: typeof args[1] === "string" ? args[1] : undefined, port: first };
}

/** Once per process: the prototypes are the process's, whichever jest sandbox (or preload) gets here first. */
function install() {
	if (net.Socket.prototype.connect[GUARD]) return;

	const connect = net.Socket.prototype.connect;
	net.Socket.prototype.connect = function guardedConnect(...args) {
		const target = targetOf(args);
		if (target && !isLoopback(target.host)) {
			const err = refusal(target.host, target.port);
			// As a failed connection reports itself: an 'error' event, never a throw out of http.get or fetch.
			process.nextTick(() => this.destroy(err));
			return this;
		}
		return connect.apply(this, args);
	};
	net.Socket.prototype.connect[GUARD] = true;

	const send = dgram.Socket.prototype.send;
	dgram.Socket.prototype.send = function guardedSend(...args) {
		const address = args.find((arg, i) => i > 0 && typeof arg === "string");
		if (address !== undefined && !isLoopback(address)) throw refusal(address, undefined);
		return send.apply(this, args);
	};
	const udpConnect = dgram.Socket.prototype.connect;
	dgram.Socket.prototype.connect = function guardedUdpConnect(port, address, callback) {
		if (typeof address === "string" && !isLoopback(address)) throw refusal(address, port);
		return udpConnect.call(this, port, address, callback);
	};
}

install();

module.exports = { isLoopback, LOOPBACK_ONLY: CODE };
