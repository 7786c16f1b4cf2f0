// The server behind a real reverse proxy: Debian's nginx, started here in front of the test
// server. nginx connects to the server from 127.0.0.200 (`proxy_bind`), the one address
// TRUST_PROXY names. Clients reach nginx from other loopback addresses (127.0.0.2 and 127.0.0.3,
// all of 127.0.0.0/8 being on Linux's loopback), so the address nginx writes into
// X-Forwarded-For is the one the connection really came from. Each address has its own anonymous
// bucket on the public API and on the dashboard, and the request log names it; the cookies are
// Secure exactly when the client came to nginx over https, whatever X-Forwarded-Proto the client
// sent itself. A client that goes around nginx to the server's port is not nginx: its own
// X-Forwarded-For and X-Forwarded-Proto count for nothing (with a hop count, TRUST_PROXY=1 as
// before, its X-Forwarded-For was believed).
import http from "node:http";
import https from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { capturedLogs } from "../../testkit/log-capture.ts";
import { invite, member, PASSWORD } from "../../testkit/dashboard-browser.ts";
import { availableEngines, postgresSkipReason, startTestServer, type TestServer } from "../../testkit/harness.ts";
import { type Nginx, nginxSkipReason, startNginx } from "../../testkit/nginx.ts";
import { loadConfig } from "../config.ts";
import { createObservability } from "../observability/observability.ts";

const noNginx = nginxSkipReason();
if (noNginx) console.log(`reverse-proxy tests ${noNginx}`);

// CI installs nginx (.ci/run): there a missing nginx is a broken setup, which must fail rather
// than pass by skipping what it was installed for. Elsewhere the tests skip with the reason above.
describe.runIf(noNginx !== null && Boolean(process.env.CI))("behind nginx in CI", () => {
  it("has nginx to run the reverse-proxy tests", () => {
    expect.fail(`CI is set, but the reverse-proxy tests cannot run: ${noNginx}`);
  });
});
const noPostgres = postgresSkipReason();
if (noPostgres) console.log(noPostgres);

/** The public API's limit on GET / without a key, per client address (http/guard.ts). */
const ANONYMOUS_PER_MINUTE = 100;
const DASHBOARD_LIMITS = { perSession: 50, perAddress: 3 };
/** nginx's address towards the server, and the proxy TRUST_PROXY names. */
const NGINX_ADDRESS = "127.0.0.200";
/** What a client that reaches the server directly claims to be. */
const FORGED = "203.0.113.9";

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown> | undefined;
}

describe.skipIf(noNginx !== null).each(availableEngines())("behind nginx (trusted by address) on %s", (engine) => {
  let server: TestServer;
  let nginx: Nginx;
  let brandId: string;
  const logs = capturedLogs("info");
  // The listeners: plain http and https, each as nginx is usually set up (X-Forwarded-Proto
  // $scheme, replacing the client's) and as a proxy that appends its word to the client's.
  const [PLAIN, TLS, PLAIN_APPENDING, TLS_APPENDING] = [0, 1, 2, 3];

  beforeAll(async () => {
    server = await startTestServer({
      engine,
      config: {
        trustProxy: loadConfig({ TRUST_PROXY: NGINX_ADDRESS }).trustProxy,
        dashboardRateLimit: DASHBOARD_LIMITS,
      },
      observability: createObservability({ logger: logs.logger }),
    });
    nginx = await startNginx(
      Number(new URL(server.baseUrl).port),
      [
        { tls: false, forwardedProto: "set" },
        { tls: true, forwardedProto: "set" },
        { tls: false, forwardedProto: "append" },
        { tls: true, forwardedProto: "append" },
      ],
      { upstreamFrom: NGINX_ADDRESS },
    );
    brandId = (await server.brand()).id;
  });
  afterAll(async () => {
    await nginx?.stop();
    await server?.close();
  });

  /** One request through nginx's `listener`, from the loopback address `from`. */
  function via(
    listener: number,
    from: string,
    method: string,
    path: string,
    options: { headers?: Record<string, string>; body?: unknown } = {},
  ): Promise<Answer> {
    const tls = listener === TLS || listener === TLS_APPENDING;
    return send(tls, nginx.ports[listener]!, from, method, path, options);
  }

  /** One request to the server's own port, around nginx, from the loopback address `from`. */
  function direct(
    from: string,
    method: string,
    path: string,
    options: { headers?: Record<string, string>; body?: unknown } = {},
  ): Promise<Answer> {
    return send(false, Number(new URL(server.baseUrl).port), from, method, path, options);
  }

  function send(
    tls: boolean,
    port: number,
    from: string,
    method: string,
    path: string,
    { headers = {}, body }: { headers?: Record<string, string>; body?: unknown },
  ): Promise<Answer> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const request = (tls ? https : http).request(
        {
          host: "127.0.0.1",
          port,
          localAddress: from,
          method,
          path,
          agent: false,
          headers: { ...(payload ? { "content-type": "application/json" } : {}), ...headers },
          ...(tls ? { ca: nginx.ca } : {}),
        },
        (response) => {
          let text = "";
          response.on("data", (chunk: Buffer) => (text += chunk.toString()));
          response.on("end", () =>
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              body: text ? JSON.parse(text) : undefined,
            }),
          );
        },
      );
      request.on("error", reject);
      request.end(payload);
    });
  }

  const setCookies = (answer: Answer) => answer.headers["set-cookie"] ?? [];

  it("gives each client address its own anonymous bucket, on the public API and the dashboard, and logs that address", async () => {
    server.clock.set(new Date("2026-11-20T12:00:01.000Z"));
    logs.take();
    const first = [];
    for (let i = 0; i <= ANONYMOUS_PER_MINUTE; i++)
      first.push((await via(PLAIN, "127.0.0.2", "GET", "/api/v1")).status);
    expect(first.slice(0, ANONYMOUS_PER_MINUTE).every((status) => status === 200)).toBe(true);
    expect(first.at(-1)).toBe(429);
    // Another client behind the same proxy: a bucket of its own. (With the proxy's address as
    // everyone's, as before TRUST_PROXY reached the public API, this was 429 too.)
    expect((await via(PLAIN, "127.0.0.3", "GET", "/api/v1")).status).toBe(200);

    // The dashboard's limit per address without a session, alike.
    const dashboard = [];
    for (let i = 0; i <= DASHBOARD_LIMITS.perAddress; i++)
      dashboard.push((await via(PLAIN, "127.0.0.2", "GET", "/dashboard/api/v1/session")).status);
    expect(dashboard).toEqual([200, 200, 200, 429]);
    const other = await via(PLAIN, "127.0.0.3", "GET", "/dashboard/api/v1/session");
    expect([other.status, other.headers["ratelimit-remaining"]]).toEqual([
      200,
      String(DASHBOARD_LIMITS.perAddress - 1),
    ]);

    // The request log names the address each limit counted.
    const lines = logs.take().filter((line) => line.msg === "request");
    expect(lines).toHaveLength(ANONYMOUS_PER_MINUTE + 1 + 1 + DASHBOARD_LIMITS.perAddress + 1 + 1);
    expect(lines.filter((line) => line.client_address === "127.0.0.2")).toHaveLength(
      ANONYMOUS_PER_MINUTE + 1 + DASHBOARD_LIMITS.perAddress + 1,
    );
    expect(lines.filter((line) => line.client_address === "127.0.0.3")).toHaveLength(2);
  });

  it("marks the cookies Secure and __Host- when the client came over https, never on the client's own word", async () => {
    server.clock.set(new Date("2026-11-20T12:05:01.000Z"));
    // Each from an address of its own, so that no answer is the dashboard's 429 (3 a minute per address).
    let client = 10;
    const csrfCookie = async (listener: number, headers: Record<string, string> = {}) => {
      const answer = await via(listener, `127.0.0.${client++}`, "GET", "/dashboard/api/v1/session", { headers });
      expect(answer.status).toBe(200);
      return setCookies(answer).join("\n");
    };

    expect(await csrfCookie(TLS)).toMatch(/^__Host-lsh_csrf=[^;]+; Path=\/; Secure; SameSite=Lax$/);
    expect(await csrfCookie(PLAIN)).toMatch(/^lsh_csrf=[^;]+; Path=\/dashboard; SameSite=Lax$/);
    // A client that claims https over plain http: nginx replaces its claim, or appends "http"
    // after it, which is the entry of nginx's hop.
    expect(await csrfCookie(PLAIN, { "x-forwarded-proto": "https" })).not.toMatch(/Secure/);
    expect(await csrfCookie(PLAIN_APPENDING, { "x-forwarded-proto": "https" })).not.toMatch(/Secure/);
    // A client that says http over https: "X-Forwarded-Proto: http, https" reaches the server,
    // whose hop is the last entry.
    expect(await csrfCookie(TLS_APPENDING, { "x-forwarded-proto": "http" })).toMatch(/^__Host-lsh_csrf=.*; Secure/);

    // Signing in over https: a Secure __Host- session, and the https origin is the server's own.
    const host = `127.0.0.1:${nginx.ports[TLS]}`;
    const session = await via(TLS, "127.0.0.3", "GET", "/dashboard/api/v1/session");
    const csrf = session.body?.csrf_token as string;
    const token = await invite(server, brandId, "behind-nginx@example.com");
    const accepted = await via(TLS, "127.0.0.3", "POST", "/dashboard/api/v1/invitations/accept", {
      headers: { origin: `https://${host}`, "x-csrf-token": csrf, cookie: `__Host-lsh_csrf=${csrf}` },
      body: { token, password: PASSWORD },
    });
    expect(accepted.status).toBe(201);
    const sessionLine = setCookies(accepted).find((line) => line.startsWith("__Host-lsh_session="));
    expect(sessionLine).toMatch(/; Path=\/; .*HttpOnly; Secure; SameSite=Lax$/);
    const cookie = sessionLine!.split(";")[0]!;
    const overview = await via(TLS, "127.0.0.3", "GET", "/dashboard/api/v1/modes/test/overview", {
      headers: { cookie },
    });
    expect(overview.status).toBe(200);
    expect(overview.headers["cache-control"]).toBe("no-store");
  });

  it("believes X-Forwarded-For from nginx only: a client on the server's own port is seen by its own address", async () => {
    server.clock.set(new Date("2026-11-20T12:10:01.000Z"));
    const email = `around-nginx-${brandId}@example.com`;
    const owner = await member(server, brandId, email);
    logs.take();

    /**
     * A failed sign-in, straight to the server's port or through nginx's plain listener, from
     * `from`, claiming the address FORGED: its CSRF cookie, then a wrong password.
     */
    const failedSignIn = async (path: "direct" | "nginx", from: string) => {
      const claim = { "x-forwarded-for": FORGED };
      const ask = (method: string, url: string, options: { headers?: Record<string, string>; body?: unknown }) =>
        path === "direct" ? direct(from, method, url, options) : via(PLAIN, from, method, url, options);
      const session = await ask("GET", "/dashboard/api/v1/session", { headers: claim });
      expect(session.status).toBe(200);
      const csrf = session.body?.csrf_token as string;
      const host = path === "direct" ? new URL(server.baseUrl).host : `127.0.0.1:${nginx.ports[PLAIN]}`;
      const failed = await ask("POST", "/dashboard/api/v1/session", {
        headers: { ...claim, origin: `http://${host}`, "x-csrf-token": csrf, cookie: `lsh_csrf=${csrf}` },
        body: { email, password: "not the password" },
      });
      expect(failed.status).toBe(401);
    };

    // Around nginx, from 127.0.0.5: the forged address is ignored, the connection's is taken.
    await failedSignIn("direct", "127.0.0.5");
    // Through nginx, from 127.0.0.6: nginx appends the address it saw after the client's claim,
    // and the server reads from the right past nginx: the client's real address.
    await failedSignIn("nginx", "127.0.0.6");

    const requests = logs.take().filter((line) => line.msg === "request");
    expect(requests.map((line) => line.client_address).sort()).toEqual([
      "127.0.0.5",
      "127.0.0.5",
      "127.0.0.6",
      "127.0.0.6",
    ]);
    const entries = (await owner.send("GET", "/audit-log?limit=100")).body.entries as Array<{
      action: string;
      actor: string;
      address: string | null;
    }>;
    const failures = entries.filter((entry) => entry.action === "session.sign_in_failed");
    expect(
      failures.map(({ actor, address }) => ({ actor, address })).sort((a, b) => a.actor.localeCompare(b.actor)),
    ).toEqual([
      { actor: "client 127.0.0.5", address: "127.0.0.5" },
      { actor: "client 127.0.0.6", address: "127.0.0.6" },
    ]);
    expect(JSON.stringify(entries)).not.toContain(FORGED);

    // Nor is a direct client's word on the scheme taken: plain http, no Secure cookie.
    const claimsHttps = await direct("127.0.0.8", "GET", "/dashboard/api/v1/session", {
      headers: { "x-forwarded-proto": "https" },
    });
    expect(setCookies(claimsHttps).join("\n")).toMatch(/^lsh_csrf=[^;]+; Path=\/dashboard; SameSite=Lax$/);

    // A new forged address on each request makes no new bucket: the direct client is held to its
    // own address's limit (3 a minute without a session), as it would be for sign-in guesses.
    server.clock.set(new Date("2026-11-20T12:11:01.000Z"));
    const statuses = [];
    for (let i = 1; i <= DASHBOARD_LIMITS.perAddress + 1; i++)
      statuses.push(
        (
          await direct("127.0.0.5", "GET", "/dashboard/api/v1/session", {
            headers: { "x-forwarded-for": `203.0.113.${i}` },
          })
        ).status,
      );
    expect(statuses).toEqual([200, 200, 200, 429]);
    // Through nginx, the address it names is believed: 127.0.0.7 has a bucket of its own.
    expect((await via(PLAIN, "127.0.0.7", "GET", "/dashboard/api/v1/session")).status).toBe(200);
  });
});
