import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { isPublicAddress } from "../domain/ip-address.ts";
import { isAllowListed, webhookHostKey } from "../domain/webhook-url.ts";

export type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

export interface DeliveryRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
}

/**
 * `permanent`: sending again cannot help (the URL is refused by the SSRF rules), so the delivery
 * fails at once instead of being retried on the schedule.
 */
export type DeliveryOutcome = (
  | { ok: true; status: number }
  | { ok: false; status: number | null; error: string; permanent?: true }
) & {
  /** The start of the receiver's answer (RESPONSE_BODY_BYTES, as UTF-8 text), when it answered. */
  body?: string;
};

/** How much of a receiver's answer is kept with each attempt: enough to read an error, no more. */
export const RESPONSE_BODY_BYTES = 1024;

export interface WebhookTransport {
  send(request: DeliveryRequest): Promise<DeliveryOutcome>;
}

/** How long an idle connection to a receiver is kept: under the 5 s after which Node's own HTTP servers (and many others) close one, so we seldom reuse a socket the receiver is closing. */
const IDLE_CONNECTION_MS = 4_000;
/** Receivers (origin and checked address) whose idle connections are kept; past it the least recently used one's are left to close. */
const KEPT_RECEIVERS = 256;

type Address = { address: string; family: number };

/** A `lookup` that answers the checked address whatever it is asked. */
function pinnedLookup(address: Address): NonNullable<http.AgentOptions["lookup"]> {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void): void => {
    if (options.all) callback(null, [address]);
    else callback(null, address.address, address.family);
  }) as never;
}

/**
 * POSTs over HTTPS (plain HTTP only to an allow-listed host) to an address we checked ourselves: the host is resolved once, every address
 * must be public (unless the host is allow-listed), and the socket is pinned to the checked
 * address through `lookup`, so a second DNS answer cannot redirect it (DNS rebinding). TLS still
 * verifies the certificate against the host name. Redirects are never followed: a 3xx is a failure.
 *
 * Connections are kept alive and reused, so a busy receiver costs one TCP (and TLS) handshake, not
 * one per delivery. Each pool belongs to one origin and one checked address, its `lookup` pinned to
 * that address: a reused connection always goes to an address checked for this delivery's host.
 */
export function httpsTransport({
  timeoutMs,
  allowHosts = [],
  resolver = systemResolver,
  ca,
}: {
  timeoutMs: number;
  allowHosts?: readonly string[];
  resolver?: Resolver;
  ca?: string | Buffer;
}): WebhookTransport {
  const agents = new Map<string, http.Agent>();
  const agentFor = (secure: boolean, host: string, port: string | number, address: Address): http.Agent => {
    const key = `${secure ? "https" : "http"}://${host}:${port}@${address.address}`;
    let agent = agents.get(key);
    if (agent) {
      // Most recently used last, so the first entry is the one to let go.
      agents.delete(key);
    } else {
      const options = { keepAlive: true, timeout: IDLE_CONNECTION_MS, lookup: pinnedLookup(address) };
      agent = secure ? new https.Agent({ ...options, ...(ca ? { ca } : {}) }) : new http.Agent(options);
      // Idle sockets close on their own (the agent's time-out); in-flight ones finish untouched.
      if (agents.size >= KEPT_RECEIVERS) agents.delete(agents.keys().next().value!);
    }
    agents.set(key, agent);
    return agent;
  };

  return {
    async send({ url, body, headers }) {
      // One deadline covers the DNS answer and the whole HTTP exchange: a slow resolver must not
      // keep an attempt alive past its lease, or another worker could send it a second time.
      const startedAt = Date.now();
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        return { ok: false, status: null, error: "invalid url", permanent: true };
      }
      const host = target.hostname.replace(/^\[|\]$/g, "");
      const allowed = isAllowListed(webhookHostKey(target.hostname), allowHosts);
      // Plain http only to a host the operator allow-listed (local development), as at registration.
      const secure = target.protocol === "https:";
      if (!secure && !(target.protocol === "http:" && allowed))
        return { ok: false, status: null, error: "refused: url is not https", permanent: true };

      let address: Address;
      try {
        const answers = isIP(host)
          ? [{ address: host, family: isIP(host) }]
          : await withDeadline(resolver(host), timeoutMs);
        if (answers.length === 0) return { ok: false, status: null, error: `${host} did not resolve` };
        const refused = answers.find((answer) => !isPublicAddress(answer.address));
        if (refused && !allowed)
          return {
            ok: false,
            status: null,
            error: `refused: ${host} resolves to non-public address ${refused.address}`,
            permanent: true,
          };
        address = answers[0]!;
      } catch (error) {
        return { ok: false, status: null, error: `dns lookup failed: ${(error as Error).message}` };
      }

      const port = target.port || (secure ? 443 : 80);
      const agent = agentFor(secure, host, port, address);
      const post = (reused: boolean): Promise<DeliveryOutcome> => {
        const remainingMs = Math.max(1, timeoutMs - (Date.now() - startedAt));
        return new Promise<DeliveryOutcome>((resolve) => {
          const request = (secure ? https : http).request(
            {
              protocol: target.protocol,
              hostname: host,
              port,
              path: target.pathname + target.search,
              method: "POST",
              headers: { ...headers, "content-length": Buffer.byteLength(body) },
              ...(secure && !isIP(host) ? { servername: host } : {}),
              // The second try takes a connection of its own, never another kept one.
              ...(reused
                ? { agent: false, lookup: pinnedLookup(address), ...(secure && ca ? { ca } : {}) }
                : { agent }),
              timeout: remainingMs,
            },
            (response) => {
              const status = response.statusCode ?? 0;
              // The first 1 KiB is kept; the rest is read and dropped.
              const kept: Buffer[] = [];
              let keptBytes = 0;
              response.on("data", (chunk: Buffer) => {
                if (keptBytes >= RESPONSE_BODY_BYTES) return;
                const part = chunk.subarray(0, RESPONSE_BODY_BYTES - keptBytes);
                kept.push(part);
                keptBytes += part.length;
              });
              response.on("end", () => {
                // As text: invalid UTF-8 (a cut character too) becomes U+FFFD, and so does NUL,
                // which a PostgreSQL text column refuses.
                const body = Buffer.concat(kept).toString("utf8").replaceAll("\u0000", "\uFFFD");
                const answered = body === "" ? {} : { body };
                resolve(
                  status >= 200 && status < 300
                    ? { ok: true, status, ...answered }
                    : {
                        ok: false,
                        status,
                        ...answered,
                        error: status >= 300 && status < 400 ? `redirect ${status} not followed` : `HTTP ${status}`,
                      },
                );
              });
              response.on("error", (error) => resolve({ ok: false, status, error: error.message }));
            },
          );
          // `timeout` fires on socket inactivity; the overall deadline covers slow trickles too.
          const deadline = setTimeout(() => request.destroy(new Error(`timed out after ${timeoutMs} ms`)), remainingMs);
          request.on("timeout", () => request.destroy(new Error(`timed out after ${timeoutMs} ms`)));
          request.on("error", (error: NodeJS.ErrnoException) => {
            // A kept connection the receiver closed just as we reused it: sent again once, on a
            // fresh connection (the receiver may have seen it: deliveries are at least once).
            if (!reused && request.reusedSocket && (error.code === "ECONNRESET" || error.code === "EPIPE"))
              resolve(post(true));
            else resolve({ ok: false, status: null, error: error.message });
          });
          request.on("close", () => clearTimeout(deadline));
          request.end(body);
        });
      };
      return post(false);
    },
  };
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
