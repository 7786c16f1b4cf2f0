import { BlockList, isIPv4, isIPv6 } from "node:net";

function blockList(family: "ipv4" | "ipv6", subnets: ReadonlyArray<[string, number]>): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of subnets) list.addSubnet(network, prefix, family);
  return list;
}

/**
 * IPv4 ranges that are not public unicast (RFC 6890 special-purpose registry and multicast).
 * BlockList also matches IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) against these.
 */
const NON_PUBLIC_V4 = blockList("ipv4", [
  ["0.0.0.0", 8], // "this network", includes 0.0.0.0
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata 169.254.169.254
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, includes broadcast 255.255.255.255
]);

/** Public IPv6 hosts live in global unicast only: this excludes ::, ::1, fc00::/7, fe80::/10, ff00::/8… */
const GLOBAL_UNICAST_V6 = blockList("ipv6", [["2000::", 3]]);

/** Special-purpose blocks inside global unicast. */
const NON_PUBLIC_V6 = blockList("ipv6", [
  ["2001::", 23], // IETF protocol assignments (Teredo, benchmarking…)
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4 embeds arbitrary IPv4 addresses
]);

/** Prefixes whose last 32 bits are the IPv4 address a connection really reaches. */
const CARRIES_V4 = blockList("ipv6", [
  ["::ffff:0:0", 96], // IPv4-mapped
  ["64:ff9b::", 96], // NAT64 well-known prefix
]);

/**
 * The IPv4 address in the last 32 bits. The URL parser's canonical form (lower-case hex groups,
 * no dotted quad, a run of zeros as "::") leaves those bits in the last two fields, where an empty
 * field stands for zero.
 */
function lastIPv4(address: string): string {
  const fields = new URL(`http://[${address}]`).hostname.slice(1, -1).split(":");
  const [high = 0, low = 0] = fields.slice(-2).map((field) => parseInt(field || "0", 16));
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
}

export function isPublicIPv4(address: string): boolean {
  return isIPv4(address) && !NON_PUBLIC_V4.check(address, "ipv4");
}

/**
 * Public unicast IPv6: inside 2000::/3 and outside the special-purpose blocks within it.
 * IPv4-mapped and NAT64 addresses are judged by the IPv4 address they carry.
 */
export function isPublicIPv6(address: string): boolean {
  const bare = address.replace(/%.*$/, ""); // a zone (fe80::1%eth0) does not change the address
  if (!isIPv6(bare)) return false;
  if (CARRIES_V4.check(bare, "ipv6")) return isPublicIPv4(lastIPv4(bare));
  return GLOBAL_UNICAST_V6.check(bare, "ipv6") && !NON_PUBLIC_V6.check(bare, "ipv6");
}

export function isPublicAddress(address: string): boolean {
  return isIPv4(address) ? isPublicIPv4(address) : isPublicIPv6(address);
}

const IPV4_MAPPED = blockList("ipv6", [["::ffff:0:0", 96]]);

/** The eight 16-bit groups of an IPv6 address (the URL parser's canonical form, "::" expanded). */
function ipv6Groups(address: string): number[] {
  const canonical = new URL(`http://[${address}]`).hostname.slice(1, -1);
  const [head = "", tail] = canonical.split("::");
  const fields = (part: string) => (part === "" ? [] : part.split(":").map((field) => parseInt(field, 16)));
  if (tail === undefined) return fields(head);
  const [before, after] = [fields(head), fields(tail)];
  return [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after];
}

/**
 * The client a per-address limit counts: an IPv4 address itself (an IPv4-mapped IPv6 address as
 * the IPv4 address it carries), and an IPv6 address as its /64, the block one subscriber or host
 * is usually given (RFC 6177; SLAAC needs a /64), so that one client cannot take a fresh address
 * from its block for every request. Anything else (not an IP address) is returned as it is. The
 * audit log and the request log keep the full address.
 */
export function addressBucket(address: string): string {
  if (isIPv4(address)) return address;
  const bare = address.replace(/%.*$/, ""); // the zone names an interface, not another client
  if (!isIPv6(bare)) return address;
  if (IPV4_MAPPED.check(bare, "ipv6")) return lastIPv4(bare);
  const prefix = ipv6Groups(bare)
    .slice(0, 4)
    .map((group) => group.toString(16));
  return `${new URL(`http://[${prefix.join(":")}::]`).hostname.slice(1, -1)}/64`;
}
