import { describe, expect, it } from "vitest";
import { addressBucket, isPublicAddress, isPublicIPv4, isPublicIPv6 } from "./ip-address.ts";

// The delivery-time SSRF check: every address a webhook host resolves to goes through
// isPublicAddress, so each non-public range must be refused at its first and last address.
const NON_PUBLIC: Array<[string, string]> = [
  ["0.0.0.0", "this network"],
  ["0.255.255.255", "this network, top"],
  ["10.0.0.0", "private 10/8"],
  ["10.255.255.255", "private 10/8, top"],
  ["100.64.0.0", "carrier-grade NAT"],
  ["100.127.255.255", "carrier-grade NAT, top"],
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback, top"],
  ["169.254.169.254", "cloud metadata"],
  ["172.16.0.0", "private 172.16/12"],
  ["172.31.255.255", "private 172.16/12, top"],
  ["192.0.0.8", "IETF protocol assignments"],
  ["192.0.2.1", "documentation"],
  ["192.88.99.1", "6to4 relay anycast"],
  ["192.168.0.1", "private 192.168/16"],
  ["198.18.0.1", "benchmarking"],
  ["198.19.255.255", "benchmarking, top"],
  ["198.51.100.7", "documentation"],
  ["203.0.113.9", "documentation"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.255", "multicast, top"],
  ["240.0.0.1", "reserved"],
  ["255.255.255.255", "broadcast"],
  ["::", "IPv6 unspecified"],
  ["::1", "IPv6 loopback"],
  ["fc00::1", "IPv6 unique local"],
  ["fd12:3456::1", "IPv6 unique local, fd"],
  ["fe80::1", "IPv6 link-local"],
  ["fe80::1%eth0", "IPv6 link-local with a zone"],
  ["ff02::1", "IPv6 multicast"],
  ["4000::1", "outside 2000::/3"],
  ["2001::1", "Teredo (2001::/23)"],
  ["2001:1ff:ffff::1", "2001::/23, top"],
  ["2001:db8::1", "IPv6 documentation"],
  ["2002:7f00:1::1", "6to4"],
  ["::ffff:127.0.0.1", "IPv4-mapped loopback, dotted"],
  ["::ffff:7f00:1", "IPv4-mapped loopback, hex"],
  ["::FFFF:A9FE:A9FE", "IPv4-mapped metadata, upper case"],
  ["::ffff:10.0.0.5", "IPv4-mapped private"],
  ["64:ff9b::10.0.0.1", "NAT64 of a private address, dotted"],
  ["64:ff9b::a9fe:a9fe", "NAT64 of the metadata address, hex"],
  ["64:ff9b::", "NAT64 of 0.0.0.0"],
  ["64:ff9b::7f00:1", "NAT64 of loopback"],
];

const PUBLIC: Array<[string, string]> = [
  ["8.8.8.8", "public"],
  ["1.1.1.1", "public"],
  ["9.255.255.255", "just below 10/8"],
  ["11.0.0.0", "just above 10/8"],
  ["100.128.0.1", "just above carrier-grade NAT"],
  ["172.32.0.1", "just above 172.16/12"],
  ["192.0.1.1", "between 192.0.0/24 and 192.0.2/24"],
  ["198.20.0.1", "just above benchmarking"],
  ["223.255.255.255", "just below multicast"],
  ["2606:4700:4700::1111", "public IPv6"],
  ["2a00:1450:4001::200e", "public IPv6"],
  ["2001:200::1", "just above 2001::/23"],
  ["::ffff:8.8.8.8", "IPv4-mapped public"],
  ["::ffff:808:808", "IPv4-mapped public, hex"],
  ["64:ff9b::8.8.8.8", "NAT64 of a public address"],
  ["64:ff9b::101:101", "NAT64 of a public address, hex"],
];

describe("public address check (SSRF at delivery)", () => {
  it.each(NON_PUBLIC)("refuses %s (%s)", (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(PUBLIC)("accepts %s (%s)", (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it("judges each family only by its own rules, and nothing that is not an address", () => {
    expect(isPublicIPv4("2606:4700:4700::1111")).toBe(false);
    expect(isPublicIPv6("8.8.8.8")).toBe(false);
    for (const notAnAddress of ["", "example.com", "8.8.8", "0x7f.0.0.1", "2130706433", "[::1]"]) {
      expect(isPublicAddress(notAnAddress)).toBe(false);
    }
  });
});

// Per-address limits (the sign-in throttle, the signed-out request limits) count an IPv6 client by
// its /64: one host or subscriber holds a whole /64 and may take a fresh address for each request.
describe("the client a per-address limit counts", () => {
  it("puts two IPv6 addresses of one /64 in one bucket, and of different /64s in different ones", () => {
    const [a, b] = [addressBucket("2001:db8:1:2::1"), addressBucket("2001:DB8:1:2:ffff:ffff:ffff:fffe")];
    expect(a).toBe("2001:db8:1:2::/64");
    expect(b).toBe(a);
    expect(addressBucket("2001:db8:1:3::1")).not.toBe(a);
    expect(addressBucket("2001:db8:0:2::1")).not.toBe(a);
    expect(addressBucket("2001:0db8:0000:0000:0000:0000:0000:0001")).toBe("2001:db8::/64");
    expect(addressBucket("2001:db8::1:2:3:4")).toBe(addressBucket("2001:db8:0:0:9::"));
    expect(addressBucket("fe80::1%eth0")).toBe("fe80::/64");
  });

  it("counts IPv4 by the address itself, an IPv4-mapped IPv6 address as the IPv4 it carries", () => {
    expect(addressBucket("198.51.100.7")).toBe("198.51.100.7");
    expect(addressBucket("198.51.100.8")).not.toBe(addressBucket("198.51.100.7"));
    expect(addressBucket("::ffff:198.51.100.7")).toBe("198.51.100.7");
    expect(addressBucket("::FFFF:c633:6407")).toBe("198.51.100.7");
  });

  it("leaves what is not an address as it is", () => {
    for (const other of ["unknown", "", "example.com"]) expect(addressBucket(other)).toBe(other);
  });
});
