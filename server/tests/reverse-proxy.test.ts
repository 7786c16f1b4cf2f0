// The server behind a real reverse proxy: Debian's nginx, started here in front of the test
// server, with TRUST_PROXY=1. Clients reach nginx from two loopback addresses (127.0.0.2 and
// 127.0.0.3, both on Linux's loopback), so the address nginx writes into X-Forwarded-For is the
// one the connection really came from. Each address has its own anonymous bucket on the public
// API and on the dashboard, and the request log names it; the cookies are Secure exactly when
// the client came to nginx over https, whatever X-Forwarded-Proto the client sent itself.
import http from "node:http";
import https from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { capturedLogs } from "../../testkit/log-capture.ts";
import { invite, PASSWORD } from "../../testkit/dashboard-browser.ts";
import { availableEngines, postgresSkipReason, startTestServer, type TestServer } from "../../testkit/harness.ts";
import { type Nginx, nginxSkipReason, startNginx } from "../../testkit/nginx.ts";
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

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown> | undefined;
}

describe.skipIf(noNginx !== null).each(availableEngines())("behind nginx (TRUST_PROXY=1) on %s", (engine) => {
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
      config: { trustProxy: 1, dashboardRateLimit: DASHBOARD_LIMITS },
      observability: createObservability({ logger: logs.logger }),
    });
    nginx = await startNginx(Number(new URL(server.baseUrl).port), [
      { tls: false, forwardedProto: "set" },
      { tls: true, forwardedProto: "set" },
      { tls: false, forwardedProto: "append" },
      { tls: true, forwardedProto: "append" },
    ]);
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
    { headers = {}, body }: { headers?: Record<string, string>; body?: unknown } = {},
  ): Promise<Answer> {
    const tls = listener === TLS || listener === TLS_APPENDING;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const request = (tls ? https : http).request(
        {
          host: "127.0.0.1",
          port: nginx.ports[listener],
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
});
