import { isIPv4, isIPv6 } from "node:net";

/** IPv4 ranges that are not public unicast (RFC 6890 special-purpose registry and multicast). */
const NON_PUBLIC_V4: ReadonlyArray<[string, number]> = [
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
];

function v4ToInt(address: string): number {
  return address.split(".").reduce((acc, part) => acc * 256 + Number(part), 0);
}

export function isPublicIPv4(address: string): boolean {
  if (!isIPv4(address)) return false;
  const value = v4ToInt(address);
  return !NON_PUBLIC_V4.some(([base, bits]) => {
    const size = 2 ** (32 - bits);
    const start = v4ToInt(base);
    return value >= start && value < start + size;
  });
}

/** Expands an IPv6 address to its eight 16-bit groups. */
function v6Groups(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, "");
  // A trailing dotted quad (::ffff:1.2.3.4) becomes two groups.
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    const value = v4ToInt(quad[1]!);
    text = text.slice(0, -quad[1]!.length) + `${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const left = head ? head.split(":") : [];
  const right = tail !== undefined && tail !== "" ? tail.split(":") : [];
  const missing = 8 - left.length - right.length;
  return [...left, ...Array<string>(tail === undefined ? 0 : missing).fill("0"), ...right].map((group) => parseInt(group, 16));
}

/**
 * Public unicast IPv6: inside 2000::/3 and outside the special-purpose blocks within it.
 * IPv4-mapped and NAT64 addresses are judged by the IPv4 address they carry.
 */
export function isPublicIPv6(address: string): boolean {
  if (!isIPv6(address)) return false;
  const groups = v6Groups(address);
  const [g0 = 0, g1 = 0] = groups;
  const embeddedV4 = `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
  const nat64 = g0 === 0x64 && g1 === 0xff9b && groups.slice(2, 6).every((group) => group === 0);
  if (mapped || nat64) return isPublicIPv4(embeddedV4);
  if ((g0 & 0xe000) !== 0x2000) return false; // outside global unicast: ::, ::1, fc00::/7, fe80::/10, ff00::/8…
  if (g0 === 0x2001 && g1 < 0x0200) return false; // 2001::/23 IETF protocol assignments (Teredo, benchmarking…)
  if (g0 === 0x2001 && g1 === 0x0db8) return false; // documentation
  if (g0 === 0x2002) return false; // 6to4 embeds arbitrary IPv4 addresses
  return true;
}

export function isPublicAddress(address: string): boolean {
  return isIPv4(address) ? isPublicIPv4(address) : isPublicIPv6(address);
}
