import { TLSSocket } from "node:tls";
import type { Express, Request } from "express";
import type { TrustProxy } from "../config.ts";

/**
 * The one client-address rule: sets Express's `trust proxy`, which `clientAddress` and
 * `clientProtocol` read. Everything that needs the client's address or scheme (the per-address
 * limits, the sign-in throttle, the request log, the audit log, the `Secure` cookie) asks them.
 */
export function trustProxies(app: Express, trust: TrustProxy): void {
  app.set("trust proxy", trust === false ? false : [...trust]);
}

/**
 * The client's address: the socket's peer, or when the peer is a trusted proxy the
 * `X-Forwarded-For` entry the farthest trusted proxy wrote (Express's `req.ip`: entries are read
 * from the right, past every one that is a trusted proxy's address; the first that is not is the
 * client's). An untrusted peer's `X-Forwarded-For` counts for nothing.
 */
export function clientAddress(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? "unknown";
}

type TrustFn = (address: string | undefined, hop: number) => boolean;

/**
 * The scheme the client used: the socket's (TLS or not), or behind trusted proxies the
 * `X-Forwarded-Proto` entry of the same hop `clientAddress` took its address from, counted from
 * the right as well. A proxy that sets the header rather than appending to it leaves fewer
 * entries than hops: then the leftmost entry is read. Express's `req.protocol` reads the first
 * entry whatever the hops, which a client can write: `X-Forwarded-Proto: http, https`.
 */
export function clientProtocol(req: Request): "http" | "https" {
  const own = req.socket instanceof TLSSocket && req.socket.encrypted ? "https" : "http";
  // Boundary: Express keeps the `trust proxy` setting compiled (by trustProxies) under this name, untyped.
  // biome-ignore lint/nursery/noUnsafeTypeAssertion: Express's own compiled setting (see above)
  const trust = req.app.get("trust proxy fn") as TrustFn;
  if (!trust(req.socket.remoteAddress, 0)) return own;
  const entries = String(req.headers["x-forwarded-proto"] ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) return own;
  // The hops whose X-Forwarded-For entries were read; at least the trusted peer itself.
  const hops = Math.max(1, req.ips.length);
  return entries[Math.max(0, entries.length - hops)]?.toLowerCase() === "https" ? "https" : "http";
}
