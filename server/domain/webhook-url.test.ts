import { describe, expect, it } from "vitest";
import { webhookUrlProblem } from "./webhook-url.ts";

// Every encoding of a non-public address must be refused at registration (invalid_url).
const REFUSED: Array<[string, string]> = [
  ["http://hooks.example.com/x", "plain http"],
  ["ftp://hooks.example.com/x", "another scheme"],
  ["not a url", "not a URL"],
  ["https://user:pass@hooks.example.com/x", "credentials"],
  ["https://hooks.example.com/\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\", "an OSC 8 link (ESC)"],
  ["https://hooks.example.com/x\x07", "BEL"],
  ["https://hooks.example.com/x\x1b[2J", "ESC (clears a terminal)"],
  ["https://hooks.example.com/x\u009b2J", "C1 CSI"],
  ["https://hooks.example.com/x\x7f", "DEL"],
  ["https://hooks.example.com/x\ty", "tab (dropped by URL parsing, kept in the stored URL)"],
  ["https://hooks.example.com/x\r\n", "CR LF"],
  ["https://user@hooks.example.com/x", "user name only"],
  ["https://hooks.example.com:0/x", "port 0"],
  ["https://localhost/x", "localhost"],
  ["https://LOCALHOST./x", "localhost, upper case with trailing dot"],
  ["https://api.localhost/x", "*.localhost"],
  ["https://localhost.localdomain/x", "localhost.localdomain"],
  ["https://printer.local/x", "mDNS .local"],
  ["https://metadata.google.internal/x", ".internal"],
  ["https://intranet/x", "single-label name"],
  ["https://127.0.0.1/x", "loopback"],
  ["https://127.1/x", "loopback, short form"],
  ["https://2130706433/x", "loopback, decimal"],
  ["https://0x7f000001/x", "loopback, hex"],
  ["https://0x7f.0.0.1/x", "loopback, hex octet"],
  ["https://0177.0.0.1/x", "loopback, octal"],
  ["https://017700000001/x", "loopback, octal whole"],
  ["https://0.0.0.0/x", "0.0.0.0"],
  ["https://0/x", "0"],
  ["https://10.0.0.1/x", "private 10/8"],
  ["https://172.16.5.4/x", "private 172.16/12"],
  ["https://172.31.255.255/x", "private 172.16/12, top"],
  ["https://192.168.1.1/x", "private 192.168/16"],
  ["https://3232235777/x", "private 192.168.1.1, decimal"],
  ["https://100.64.0.1/x", "carrier-grade NAT"],
  ["https://169.254.169.254/latest/meta-data", "cloud metadata"],
  ["https://169.254.1.1/x", "link-local"],
  ["https://0xa9fea9fe/x", "metadata, hex"],
  ["https://255.255.255.255/x", "broadcast"],
  ["https://224.0.0.1/x", "multicast"],
  ["https://240.0.0.1/x", "reserved"],
  ["https://192.0.2.10/x", "documentation range"],
  ["https://198.18.0.1/x", "benchmarking range"],
  ["https://[::1]/x", "IPv6 loopback"],
  ["https://[::ffff:127.0.0.1]/x", "IPv4-mapped IPv6 loopback"],
  ["https://[::ffff:a9fe:a9fe]/x", "IPv4-mapped IPv6 metadata"],
  ["https://[fe80::1]/x", "IPv6 link-local"],
  ["https://[fc00::1]/x", "IPv6 unique local"],
  ["https://[2606:4700:4700::1111]/x", "public IPv6 literal (all IPv6 literals are refused)"],
];

const ACCEPTED = [
  "https://hooks.example.com/stream-events",
  "https://api.partner.io:8443/webhooks?source=livestream",
  "https://8.8.8.8/hook",
  "https://1.1.1.1/hook",
  "https://172.32.0.1/x",
  "https://hooks.example.com./trailing-dot",
];

describe("webhook URL rules", () => {
  it.each(REFUSED)("refuses %s (%s)", (url) => {
    expect(webhookUrlProblem(url)).toEqual(expect.any(String));
  });

  it("covers at least 30 refused URLs", () => {
    expect(REFUSED.length).toBeGreaterThanOrEqual(30);
  });

  it.each(ACCEPTED)("accepts the public URL %s", (url) => {
    expect(webhookUrlProblem(url)).toBeNull();
  });

  it("lets WEBHOOK_ALLOW_HOSTS exempt a local host, over https or http (the operator's choice), never with credentials", () => {
    expect(webhookUrlProblem("https://localhost:9443/hook", ["localhost"])).toBeNull();
    expect(webhookUrlProblem("https://127.0.0.1:9443/hook", ["127.0.0.1"])).toBeNull();
    expect(webhookUrlProblem("http://localhost:9443/hook", ["localhost"])).toBeNull();
    expect(webhookUrlProblem("http://127.0.0.1:3000/hook", ["127.0.0.1"])).toBeNull();
    expect(webhookUrlProblem("https://a:b@localhost:9443/hook", ["localhost"])).toMatch(/credentials/);
    expect(webhookUrlProblem("ftp://localhost/hook", ["localhost"])).toMatch(/https/);
  });

  it("keeps https-only for every host that is not allow-listed", () => {
    expect(webhookUrlProblem("http://hooks.example.com/x")).toMatch(/must use https/);
    expect(webhookUrlProblem("http://hooks.example.com/x", ["localhost"])).toMatch(/must use https/);
    expect(webhookUrlProblem("http://localhost:3000/x", ["127.0.0.1"])).toMatch(/localhost/);
  });

  it.each([
    "https://localhost/x",
    "http://localhost:3000/hook",
    "https://127.0.0.1/x",
    "https://10.0.0.1/x",
    "https://[::1]/x",
    "https://printer.local/x",
  ])("says how to develop locally when it refuses %s", (url) => {
    const problem = webhookUrlProblem(url);
    expect(problem).toContain("WEBHOOK_ALLOW_HOSTS");
    expect(problem).toMatch(
      /run `npx live-stream-hosting listen --forward-to http:\/\/localhost:3000\/hooks` \(no tunnel/,
    );
  });
});

// Host names WHATWG parsing lets through but DNS cannot carry (RFC 1123 labels, 253 characters).
const label63 = "a".repeat(63);
const name253 = `${[label63, label63, label63].join(".")}.${"b".repeat(61)}`;

describe("webhook URL host names", () => {
  it.each([
    ["https://a..b/", "an empty label"],
    ["https://.example.com/", "an empty first label"],
    ["https://-bad-.example/", "a label starting and ending with a hyphen"],
    ["https://bad-.example/", "a label ending with a hyphen"],
    ["https://-bad.example/", "a label starting with a hyphen"],
    ["https://x_y.example/", "an underscore"],
    ["https://a*b.example/", "an asterisk"],
    ["https://a!b.example/", "an exclamation mark"],
    ["https://a$b.example/", "a dollar sign"],
    ["https://a~b.example/", "a tilde"],
    ["https://a{b}.example/", "braces"],
    [`https://${"a".repeat(64)}.example/`, "a label of 64 characters"],
    [`https://${name253}x/`, "a name of 254 characters"],
  ])("refuses %s (%s), naming the rule", (url) => {
    expect(webhookUrlProblem(url)).toMatch(
      /^url's host is not a valid host name: .*1 to 63 letters, digits or hyphens/,
    );
  });

  it.each([
    `https://${label63}.example/`,
    `https://${name253}/`,
    `https://${name253}./`,
    "https://a-b.example/",
    "https://1password.example/",
    "https://xn--bcher-kva.example/",
    "https://bücher.example/",
    "https://HOOKS.Example.COM/",
  ])("accepts %s", (url) => {
    expect(webhookUrlProblem(url)).toBeNull();
  });

  it("leaves an allow-listed host to the operator, as it does with the public-host rule", () => {
    expect(webhookUrlProblem("http://webhook_receiver:8080/hook", ["webhook_receiver"])).toBeNull();
    expect(webhookUrlProblem("https://webhook_receiver:8080/hook")).toMatch(/not a valid host name/);
  });
});
