import { isIPv4 } from "node:net";
import { isPublicIPv4 } from "./ip-address.ts";

/** Host names that only ever mean this machine or a private network. */
const PRIVATE_NAME = /(^|\.)(localhost|localdomain|local|internal|home\.arpa)$/;

/** C0 controls (ESC, BEL, CR, LF, tab…), DEL and C1 controls: never in a URL as sent. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL_CHARACTER = /[\x00-\x1f\x7f-\x9f]/;

/** A DNS label (RFC 1123 §2.1): 1 to 63 letters, digits or hyphens, no hyphen first or last. */
const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The longest host name DNS carries, without its trailing dot. */
const MAX_HOST_NAME_LENGTH = 253;

const INVALID_HOST_NAME =
  "url's host is not a valid host name: each dot-separated label must be 1 to 63 letters, digits or hyphens, " +
  "not starting or ending with a hyphen, and the whole name at most 253 characters.";

/**
 * True for a host key (see webhookHostKey) that DNS could resolve: WHATWG parsing accepts
 * `a..b`, `-bad-.example` and `x_y.example`, which name no host. An internationalised name
 * arrives punycoded (`xn--…` labels) and an IPv4 address as four decimal labels, both valid.
 */
export function isHostName(host: string): boolean {
  return host.length <= MAX_HOST_NAME_LENGTH && host.split(".").every((label) => HOST_LABEL.test(label));
}

/**
 * The host as `WEBHOOK_ALLOW_HOSTS` entries are compared with, at registration and at delivery
 * alike: lower case, without a trailing dot.
 */
export function webhookHostKey(hostname: string): string {
  return hostname.replace(/\.$/, "").toLowerCase();
}

/**
 * How to receive webhooks on a machine of your own, appended to every refusal of a local or
 * private URL: the public-host rule has one exemption, chosen by whoever runs the server.
 */
export const LOCAL_DEVELOPMENT_HINT =
  "To receive test-mode events on your own machine, register nothing: run " +
  "`npx live-stream-hosting listen --forward-to http://localhost:3000/hooks` (no tunnel, no public URL). " +
  "When you run the server yourself you may instead list the host in WEBHOOK_ALLOW_HOSTS " +
  "(e.g. WEBHOOK_ALLOW_HOSTS=localhost; http is then allowed for it too).";

/**
 * Why a webhook URL is refused at registration, or null when it is acceptable. The host is judged
 * after WHATWG parsing, which turns `https://2130706433/`, `https://0x7f.1/` and `https://0177.0.0.1/`
 * into 127.0.0.1, and whose host names it does not check (see isHostName). Hosts in `allowHosts`
 * skip the public-host and host-name rules and may use http (the operator chose them, for local
 * development and tests: a container's name may hold an underscore); credentials are refused
 * everywhere.
 */
export function webhookUrlProblem(raw: string, allowHosts: readonly string[] = []): string | null {
  // WHATWG parsing drops tabs and line feeds and percent-encodes the rest, but the URL is stored
  // and shown as sent: a terminal that prints it would obey an ESC or BEL in it (an OSC 8 link).
  if (CONTROL_CHARACTER.test(raw))
    return "url must not contain control characters (C0 such as ESC or BEL, DEL, C1); percent-encode them.";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "url is not a valid absolute URL.";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "url must use https.";
  if (url.username || url.password) return "url must not contain credentials.";
  if (url.port === "0") return "url must not use port 0.";
  const host = webhookHostKey(url.hostname);
  if (isAllowListed(host, allowHosts)) return null;
  if (!host.startsWith("[") && !isHostName(host)) return INVALID_HOST_NAME;
  const local = localHostProblem(host);
  if (local) return `${local} ${LOCAL_DEVELOPMENT_HINT}`;
  if (url.protocol !== "https:") return "url must use https.";
  return null;
}

/** True when `host` (a host key, brackets of an IPv6 literal allowed) is in WEBHOOK_ALLOW_HOSTS. */
export function isAllowListed(host: string, allowHosts: readonly string[]): boolean {
  return allowHosts.includes(host) || allowHosts.includes(host.replace(/^\[|\]$/g, ""));
}

function localHostProblem(host: string): string | null {
  if (host.startsWith("[")) return "url must not use an IPv6 literal; use a public host name.";
  if (isIPv4(host)) return isPublicIPv4(host) ? null : "url must not point to a private, loopback or reserved address.";
  if (PRIVATE_NAME.test(host) || !host.includes("."))
    return "url must name a public host, not localhost or a local name.";
  return null;
}
