// Which addresses a production account's webhooks may reach: public unicast
// only, so a merchant cannot point us at our own network (SSRF). ipaddr.js
// classifies; anything it does not call "unicast" is refused, which covers
// loopback, private (10/8, 172.16/12, 192.168/16), link-local, CGNAT,
// unique-local IPv6, unspecified, multicast, broadcast and reserved ranges.
// IPv4-mapped IPv6 (::ffff:127.0.0.1) is judged as the IPv4 address it maps.
import ipaddr from "ipaddr.js";

const RANGE_NAMES: Record<string, string> = {
	loopback: "a loopback address",
	private: "a private address",
	linkLocal: "a link-local address",
	carrierGradeNat: "a carrier-grade NAT address",
	uniqueLocal: "a unique-local address",
	unspecified: "an unspecified address",
	multicast: "a multicast address",
	broadcast: "a broadcast address",
};

/** Null when the address may be connected to; otherwise why not, e.g. "refused: 127.0.0.1 is a loopback address". */
export function refusalOf(address: string): string | null {
	if (!ipaddr.isValid(address)) return `refused: ${address} is not an IP address`;
	const ip = ipaddr.process(address);
	const range = ip.range();
	if (range === "unicast") return null;
	return `refused: ${ip.toString()} is ${RANGE_NAMES[range] ?? `a reserved address (${range})`}`;
}
