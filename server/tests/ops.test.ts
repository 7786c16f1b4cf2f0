import { get as httpGet, type IncomingHttpHeaders } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { testDatabaseUrl } from "../config.ts";
import { silentLogger } from "../observability/logger.ts";
import { createObservability, type Observability } from "../observability/observability.ts";
import { checkReadiness, workerRegistry } from "../observability/readiness.ts";
import type { WebhookTransport } from "../providers/webhook-transport.ts";
import { openDatabase } from "../store/database.ts";
import { latestMigration } from "../store/observability.ts";
import { failingDatabase } from "../../testkit/failing-database.ts";
import {
  freshDatabase,
  postgresSkipReason,
  startTestServer,
  streamBody,
  type TestServer,
} from "../../testkit/harness.ts";

const METRICS_TOKEN = "metrics-token-0123456789abcdef";

/** What the background jobs register in main.ts, without running them: the harness drives sweeps and deliveries itself. */
function withJobsRunning(observability: Observability): Observability {
  for (const name of ["lifecycle_sweeper", "delivery_worker"] as const)
    observability.workers.track(name, { stop: async () => undefined });
  return observability;
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function serverOn(options: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const server = await startTestServer({ engine: "pglite", ...options });
  closers.push(() => server.close());
  return server;
}

/** A failing-on-demand PGlite database the test server runs on. */
async function failingServer(options: Parameters<typeof startTestServer>[0] = {}) {
  const fresh = await freshDatabase("pglite");
  closers.push(() => fresh.drop());
  const failing = failingDatabase(fresh.db);
  const server = await serverOn({ database: failing.db, ...options });
  return { server, failOn: failing.failOn };
}

/** The value of one sample in Prometheus text, e.g. `http_requests_total{operation="createStream",status="201"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /healthz", () => {
  it("answers 200 { status: ok } with a Request-Id, even while the database fails", async () => {
    const { server, failOn } = await failingServer();
    failOn(/./);
    const health = await server.call("GET", "/healthz");
    expect([health.status, health.body]).toEqual([200, { status: "ok" }]);
    expect(health.headers.get("request-id")).toMatch(/\S/);
    expect(health.headers.get("cache-control")).toBe("no-store");
  });
});

describe("GET /readyz", () => {
  it("is 200 with every check ok when the database answers, is migrated, authenticates and the jobs run", async () => {
    const server = await serverOn({ observability: withJobsRunning(createObservability({ logger: silentLogger() })) });
    const ready = await server.call("GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({
      status: "ready",
      checks: {
        database: "ok",
        migrations: "ok",
        authentication: "ok",
        lifecycle_sweeper: "ok",
        delivery_worker: "ok",
      },
    });
    expect(ready.headers.get("request-id")).toMatch(/\S/);
  });

  it("is 503 naming the database while it is unreachable, and 200 again once it answers", async () => {
    const { server, failOn } = await failingServer({
      observability: withJobsRunning(createObservability({ logger: silentLogger() })),
    });
    failOn(/./);
    const down = await server.call("GET", "/readyz");
    expect(down.status).toBe(503);
    expect(down.body).toEqual({
      status: "not_ready",
      checks: {
        database: "unreachable",
        migrations: "unknown",
        authentication: "unknown",
        lifecycle_sweeper: "ok",
        delivery_worker: "ok",
      },
    });
    failOn(null);
    expect((await server.call("GET", "/readyz")).status).toBe(200);
  });

  it("is 503 naming authentication while the statements that authenticate requests fail, though the database answers", async () => {
    const { server, failOn } = await failingServer({
      observability: withJobsRunning(createObservability({ logger: silentLogger() })),
    });
    const { key } = await server.tenant();
    // As a lock on the keys table would: every authenticated request fails.
    failOn(/\bapi_keys\b/);
    expect((await server.call("GET", "/api/v1/streams", { key })).status).toBe(500);
    const down = await server.call("GET", "/readyz");
    expect([down.status, down.body.checks.database, down.body.checks.authentication]).toEqual([
      503,
      "ok",
      "unreachable",
    ]);
    failOn(null);
    expect((await server.call("GET", "/readyz")).status).toBe(200);
  });

  it("is 503 not_migrated when the newest migration this code knows is not recorded", async () => {
    const server = await serverOn({ observability: withJobsRunning(createObservability({ logger: silentLogger() })) });
    await server.db.query("DELETE FROM schema_migrations WHERE name = $1", [latestMigration()]);
    const behind = await server.call("GET", "/readyz");
    expect([behind.status, behind.body.checks.database, behind.body.checks.migrations]).toEqual([
      503,
      "ok",
      "not_migrated",
    ]);
  });

  it("is 503 naming a background job that does not run (not started, or stopped)", async () => {
    const observability = createObservability({ logger: silentLogger() });
    const server = await serverOn({ observability });
    expect((await server.call("GET", "/readyz")).body.checks).toMatchObject({
      lifecycle_sweeper: "not_running",
      delivery_worker: "not_running",
    });
    observability.workers.track("lifecycle_sweeper", { stop: async () => undefined });
    const worker = observability.workers.track("delivery_worker", { stop: async () => undefined });
    expect((await server.call("GET", "/readyz")).status).toBe(200);
    await worker.stop();
    const stopped = await server.call("GET", "/readyz");
    expect([stopped.status, stopped.body.checks.delivery_worker, stopped.body.checks.lifecycle_sweeper]).toEqual([
      503,
      "not_running",
      "ok",
    ]);
  });

  it("says timeout when the database does not answer in time", async () => {
    const hanging = { query: () => new Promise<never>(() => undefined) };
    const workers = workerRegistry();
    const readiness = await checkReadiness({ db: hanging, workers, timeoutMs: 20 });
    expect(readiness).toEqual({
      ready: false,
      checks: {
        database: "timeout",
        migrations: "unknown",
        authentication: "unknown",
        lifecycle_sweeper: "not_running",
        delivery_worker: "not_running",
      },
    });
  });

  it.skipIf(postgresSkipReason() !== null)(
    "on PostgreSQL, is 503 while the database refuses connections and 200 once it accepts them again (pool gauges from pg's Pool)",
    async () => {
      const fresh = await freshDatabase("postgres");
      closers.push(() => fresh.drop());
      // Its own pool, so the outage below does not touch the connection that drops the database.
      const db = await openDatabase(fresh.url);
      closers.push(() => db.close());
      const server = await serverOn({
        database: db,
        config: { metricsToken: METRICS_TOKEN },
        observability: withJobsRunning(createObservability({ logger: silentLogger(), metrics: true })),
      });
      expect((await server.call("GET", "/readyz")).status).toBe(200);
      const scraped = await server.call("GET", "/metrics", { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(sample(scraped.text, "db_pool_total")).toBeGreaterThanOrEqual(1);
      expect(sample(scraped.text, "db_pool_idle")).toBeGreaterThanOrEqual(1);
      expect(sample(scraped.text, "db_pool_waiting")).toBe(0);
      const name = new URL(fresh.url).pathname.slice(1);
      const admin = new pg.Client({ connectionString: testDatabaseUrl() });
      await admin.connect();
      try {
        await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
        await admin.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
          [name],
        );
        const down = await server.call("GET", "/readyz");
        expect([down.status, down.body.checks.database]).toEqual([503, "unreachable"]);
        expect((await server.call("GET", "/healthz")).status).toBe(200);
        await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`);
        expect((await server.call("GET", "/readyz")).status).toBe(200);
      } finally {
        await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`).catch(() => undefined);
        await admin.end();
      }
    },
  );
});

describe("GET /metrics", () => {
  it("is 404 in the API's error shape when METRICS_TOKEN is not set", async () => {
    const server = await serverOn();
    const answer = await server.call("GET", "/metrics", { key: METRICS_TOKEN });
    expect([answer.status, answer.body.error.code]).toEqual([404, "not_found"]);
    expect(answer.headers.get("request-id")).toMatch(/\S/);
  });

  it("is 401 without the token and with a wrong one", async () => {
    const server = await serverOn({ config: { metricsToken: METRICS_TOKEN } });
    for (const headers of [
      {} as Record<string, string>,
      { authorization: `Bearer ${METRICS_TOKEN}x` },
      { authorization: `bearer ${METRICS_TOKEN}` },
      { authorization: METRICS_TOKEN },
    ]) {
      const answer = await server.call("GET", "/metrics", { headers });
      expect([answer.status, answer.body.error.code], JSON.stringify(headers)).toEqual([401, "unauthorized"]);
    }
  });

  it("slows guesses of METRICS_TOKEN and ADMIN_TOKEN per address: 429 after 5 failures, growing waits", async () => {
    const server = await serverOn({ config: { metricsToken: METRICS_TOKEN, trustProxy: ["loopback"] } });
    const from = (address: string, token: string) => ({
      headers: { "x-forwarded-for": address, authorization: `Bearer ${token}` },
    });
    const guesses = [];
    for (let i = 0; i < 8; i++)
      guesses.push((await server.call("GET", "/metrics", from("198.51.100.9", `guess-${i}`))).status);
    expect(guesses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    // Refused without being compared, the right token too, until the wait is over.
    const early = await server.call("GET", "/metrics", from("198.51.100.9", METRICS_TOKEN));
    expect([early.status, early.body.error.code]).toEqual([429, "rate_limited"]);
    expect(early.body.error.message).toMatch(/Try again in 1 s/);
    // The operator API shares the address's count; another address is not slowed.
    expect((await server.call("GET", "/admin/v1/brands", from("198.51.100.9", "another-guess"))).status).toBe(429);
    expect((await server.call("GET", "/metrics", from("198.51.100.10", METRICS_TOKEN))).status).toBe(200);
    server.clock.advance(1_000);
    expect((await server.call("GET", "/admin/v1/brands", from("198.51.100.9", "still-guessing"))).status).toBe(401);
    const doubled = await server.call("GET", "/metrics", from("198.51.100.9", METRICS_TOKEN));
    expect(doubled.body.error.message).toMatch(/Try again in 2 s/);
    server.clock.advance(2_000);
    expect((await server.call("GET", "/metrics", from("198.51.100.9", METRICS_TOKEN))).status).toBe(200);
  });

  it("serves every series with plausible values after requests, a 429, a failed webhook attempt and a sweep", async () => {
    const transport: WebhookTransport = { send: async () => ({ ok: false, status: 500, error: "HTTP 500" }) };
    const server = await serverOn({
      config: { metricsToken: METRICS_TOKEN },
      delivery: { transport, retryScheduleMs: [60_000] },
    });
    const { key } = await server.tenant({ rate_limit_per_minute: 4 });
    expect(
      (
        await server.call("POST", "/api/v1/webhooks", {
          key,
          body: { url: "https://hooks.example.com/in", events: ["stream.started"] },
        })
      ).status,
    ).toBe(201);
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody({ duration_minutes: 5 }) });
    expect(created.status).toBe(201);
    expect((await server.call("GET", "/api/v1/streams", { key })).status).toBe(200);
    expect((await server.call("GET", "/api/v1/streams", { key })).status).toBe(200);
    expect((await server.call("GET", "/api/v1/streams", { key })).status).toBe(429);
    expect((await server.call("GET", "/api/v1/nowhere")).status).toBe(404);
    expect(await server.deliver()).toBe(1);
    server.clock.advance(6 * 60_000);
    expect(await server.sweep()).toBe(1);

    const scraped = await server.call("GET", "/metrics", { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = scraped.text;
    expect(sample(text, 'http_requests_total{operation="createWebhook",status="201"}')).toBe(1);
    expect(sample(text, 'http_requests_total{operation="createStream",status="201"}')).toBe(1);
    expect(sample(text, 'http_requests_total{operation="listStreams",status="200"}')).toBe(2);
    expect(sample(text, 'http_requests_total{operation="listStreams",status="429"}')).toBe(1);
    expect(sample(text, 'http_requests_total{operation="unknown",status="404"}')).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count{operation="listStreams"}')).toBe(3);
    expect(sample(text, 'http_request_duration_seconds_bucket{le="+Inf",operation="listStreams"}')).toBe(3);
    expect(sample(text, "rate_limited_total")).toBe(1);
    expect(sample(text, 'webhook_attempts_total{outcome="failed"}')).toBe(1);
    // The failed delivery waits for its retry a minute after the attempt; the clock is 6 min on, so it has been due 5 min.
    expect(sample(text, "webhook_delivery_backlog")).toBe(1);
    expect(sample(text, "webhook_oldest_due_delivery_age_seconds")).toBe(300);
    expect(sample(text, 'streams{status="ended"}')).toBe(1);
    expect(sample(text, 'streams{status="live"}')).toBe(0);
    expect(sample(text, 'streams{status="preparing"}')).toBe(0);
    expect(sample(text, 'streams{status="error"}')).toBe(0);
    expect(sample(text, "lifecycle_sweep_duration_seconds_count")).toBe(1);
    expect(sample(text, "db_pool_total")).toBe(1);
    expect(sample(text, "db_pool_idle")).toBeGreaterThanOrEqual(0);
    expect(sample(text, "db_pool_waiting")).toBeGreaterThanOrEqual(0);
    expect(sample(text, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
    expect(sample(text, "nodejs_eventloop_lag_seconds")).toBeGreaterThanOrEqual(0);
    // Bounded labels: no path, id or key in any series.
    expect(text).not.toMatch(/nowhere|svc_test_|[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  it("still answers while the database fails: no streams samples, NaN for the backlog", async () => {
    const fresh = await freshDatabase("pglite");
    closers.push(() => fresh.drop());
    const failing = failingDatabase(fresh.db);
    const server = await serverOn({ database: failing.db, config: { metricsToken: METRICS_TOKEN } });
    failing.failOn(/./);
    const scraped = await server.call("GET", "/metrics", { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(scraped.status).toBe(200);
    expect(sample(scraped.text, 'streams{status="live"}')).toBeUndefined();
    expect(sample(scraped.text, "webhook_delivery_backlog")).toBeNaN();
    expect(sample(scraped.text, "webhook_oldest_due_delivery_age_seconds")).toBeNaN();
    expect(sample(scraped.text, "db_pool_total")).toBe(1);
    failing.failOn(null);
  });
});

describe("the operations endpoints and the contract", () => {
  it("are not in the served contract, and the API's 404 for unknown paths is unchanged", async () => {
    const server = await serverOn();
    const contract = await server.call("GET", "/docs/openapi.yaml");
    expect(contract.status).toBe(200);
    expect(contract.text).not.toMatch(/healthz|readyz|\/metrics/);
    const unknown = await server.call("GET", "/api/v1/healthz");
    expect([unknown.status, unknown.body.error.code]).toEqual([404, "not_found"]);
  });
});

describe("the served docs", () => {
  it("are sent compressed to a client that accepts brotli or gzip, the same page once decoded", async () => {
    const server = await serverOn();
    const plain = await fetch(`${server.baseUrl}/docs`, { headers: { "accept-encoding": "identity" } });
    const page = Buffer.from(await plain.arrayBuffer());
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("vary")).toMatch(/Accept-Encoding/i);
    for (const [accept, encoding, decode] of [
      ["br", "br", brotliDecompressSync],
      ["gzip, deflate", "gzip", gunzipSync],
      ["gzip;q=1, br;q=0.5", "gzip", gunzipSync],
    ] as const) {
      const answer = await rawGet(server.baseUrl, "/docs", accept);
      expect(answer.headers["content-encoding"], accept).toBe(encoding);
      expect(answer.body.length, accept).toBeLessThan(page.length / 3);
      expect(decode(answer.body).equals(page), accept).toBe(true);
    }
    const yaml = await rawGet(server.baseUrl, "/docs/openapi.yaml", "br");
    expect(brotliDecompressSync(yaml.body).toString()).toMatch(/^openapi: 3\.1/m);
  });
});

/** A GET whose body is read as sent (fetch would decode it). */
function rawGet(base: string, path: string, acceptEncoding: string) {
  return new Promise<{ headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    const request = httpGet(`${base}${path}`, { headers: { "accept-encoding": acceptEncoding } }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
    });
    request.on("error", reject);
  });
}
