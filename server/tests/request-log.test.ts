// The request log (GET /requests, docs/operators.md "Request log"), on both engines: every request
// made with a brand's key is logged, refused ones included (400, 401 for a revoked or expired key,
// 402, 403, 404, 429) and an unknown key's 401 not; no stored row holds a secret, token or key the
// contract marks sensitive; filters, paging, scopes and modes; the per-brand ceiling and the age
// limit, in bounded batches; and on PostgreSQL, requests answered promptly while the log's table is
// locked or the database restarts, its batches dropped and counted in /metrics.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { components } from "../../generated/api.ts";
import { createClient } from "../../sdk/index.ts";
import { member } from "../../testkit/dashboard-browser.ts";
import {
  ADMIN_TOKEN,
  availableEngines,
  type Engine,
  postgresSkipReason,
  startTestServer,
  streamBody,
  type TestServer,
} from "../../testkit/harness.ts";
import { lowestTimeOrderedId, TimeOrderedIds } from "../domain/time-ordered-id.ts";
import { clusterSkipReason, createCluster, type PgCluster } from "../../testkit/pg-cluster.ts";
import { createObservability } from "../observability/observability.ts";
import { seedCreators } from "../store/creators.ts";
import { type Database, openDatabase, type Queryable } from "../store/database.ts";
import { migrate } from "../store/migrate.ts";
import { silentLogger } from "../observability/logger.ts";
import { requestLogRetention } from "../services/request-log.ts";
import {
  decodeBody,
  findRequestLogEntry,
  insertRequestLogRows,
  type RequestLogRow,
  storedRequestCount,
} from "../store/request-log.ts";

const HOOK = { url: "https://hooks.example.com/live", events: ["stream.started", "stream.ended"] };
const METRICS_TOKEN = "request-log-metrics-token-0123456789";

/**
 * Every row of the log: PostgreSQL's text of the whole row, and its bodies read back from their
 * stored bytes (compressed when long, so the row's text alone would not show them).
 */
async function storedText(server: TestServer): Promise<string> {
  const rows = await server.db.query<{
    row: string;
    request_body: Uint8Array | null;
    response_body: Uint8Array | null;
  }>("SELECT r::text AS row, request_body, response_body FROM request_log r");
  return rows
    .map((row) => [row.row, decodeBody(row.request_body), decodeBody(row.response_body)].join("\n"))
    .join("\n");
}

type Entry = components["schemas"]["RequestLogEntry"];

async function logOf(server: TestServer, key: string, query = ""): Promise<Entry[]> {
  await server.flushRequestLog();
  const answer = await server.call("GET", `/api/v1/requests${query}`, { key });
  expect(answer.status, answer.text).toBe(200);
  return answer.body.requests;
}

/**
 * `count` rows of one brand and mode made at `at`, as the writer stores them, their request ids
 * `prefix` and a number. Each call its own ids: one maker never goes back in time, and some rows
 * made this way are old.
 */
function bulkRows(brandId: string, mode: "test" | "live", count: number, at: number, prefix: string): RequestLogRow[] {
  return new TimeOrderedIds().next(Array.from({ length: count }, () => at)).map(({ id, ms }, index) => ({
    brandId,
    mode,
    id,
    requestId: `${prefix}${index}`,
    createdAt: new Date(ms),
    keyId: randomUUID(),
    keyName: "bulk",
    keyLastFour: "abcd",
    method: "GET",
    path: "/streams",
    query: null,
    status: 200,
    errorCode: null,
    durationMs: 1.5,
    clientAddress: "127.0.0.1",
    idempotencyKey: null,
    replayed: false,
    requestBody: null,
    requestBodyTruncated: false,
    responseBody: "{}",
    responseBodyTruncated: false,
  }));
}

describe.each(availableEngines())("the request log on %s", (engine: Engine) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({
      engine,
      config: { metricsToken: METRICS_TOKEN },
      observability: createObservability({ logger: silentLogger(), metrics: true }),
    });
  });
  afterAll(() => server?.close());

  it("logs every kind of refusal made with a brand's key, and never an unknown key's 401", async () => {
    const { id: brandId } = await server.brand({ rate_limit_per_minute: 30 });
    const { key } = await server.key(brandId);
    const readOnly = await server.key(brandId, { scopes: ["streams:read"] });
    const revoked = await server.key(brandId);
    const expiring = await server.key(brandId, {
      expiresAt: new Date(server.clock().getTime() + 60_000).toISOString(),
    });
    // A live key of a brand moved below Growth: 402 plan_required.
    const live = await server.key(brandId, { environment: "live" });

    expect((await server.call("POST", "/api/v1/streams", { key, body: { product_name: 7 } })).status).toBe(400);
    expect((await server.call("GET", `/api/v1/streams/${randomUUID()}`, { key })).status).toBe(404);
    expect((await server.call("POST", "/api/v1/streams", { key: readOnly.key, body: streamBody() })).status).toBe(403);
    const revoking = await server.call("POST", "/admin/v1/keys/revoke", {
      key: ADMIN_TOKEN,
      body: { key: revoked.key },
    });
    expect(revoking.status).toBe(200);
    expect((await server.call("GET", "/api/v1/streams", { key: revoked.key })).status).toBe(401);
    server.clock.advance(120_000);
    expect((await server.call("GET", "/api/v1/streams", { key: expiring.key })).status).toBe(401);
    const unknown = `svc_test_${"Z".repeat(32)}`;
    expect((await server.call("GET", "/api/v1/streams", { key: unknown })).status).toBe(401);
    const downgraded = await server.call("PATCH", `/admin/v1/brands/${brandId}`, {
      key: ADMIN_TOKEN,
      body: { plan: "starter" },
    });
    expect(downgraded.status).toBe(200);
    expect((await server.call("GET", "/api/v1/streams", { key: live.key })).status).toBe(402);

    // The brand's 30 a minute, spent: the next is 429.
    let limited = 0;
    for (let i = 0; i < 30 && limited === 0; i++)
      if ((await server.call("GET", "/api/v1/streams", { key })).status === 429) limited++;
    expect(limited).toBe(1);
    server.clock.advance(60_000);

    const test = await logOf(server, key, "?limit=100");
    const seen = new Set(test.map((entry) => `${entry.status} ${entry.error_code ?? ""} ${entry.key_hint}`));
    const hint = (full: string) => `svc_test_…${full.slice(-4)}`;
    expect(seen).toContain(`400 missing_fields ${hint(key)}`);
    expect(seen).toContain(`404 not_found ${hint(key)}`);
    expect(seen).toContain(`403 insufficient_scope ${hint(readOnly.key)}`);
    expect(seen).toContain(`401 unauthorized ${hint(revoked.key)}`);
    expect(seen).toContain(`401 unauthorized ${hint(expiring.key)}`);
    expect(seen).toContain(`429 rate_limited ${hint(key)}`);
    const refusedRevoked = test.find((entry) => entry.key_hint === hint(revoked.key))!;
    expect(refusedRevoked).toMatchObject({
      method: "GET",
      path: "/streams",
      query: null,
      key_name: expect.any(String),
    });
    // The live key's 402 is in the live log, which a live key reads (this brand's live keys now all
    // answer 402: the brand goes back to Growth to read it).
    await server.call("PATCH", `/admin/v1/brands/${brandId}`, { key: ADMIN_TOKEN, body: { plan: "growth" } });
    const liveLog = await logOf(server, live.key);
    expect(liveLog.map((entry) => `${entry.status} ${entry.error_code}`)).toContain("402 plan_required");
    expect(test.some((entry) => entry.status === 402)).toBe(false);
    // The unknown key's 401 belongs to no brand and is nowhere.
    const all = await server.db.query<{ key_last_four: string | null; status: number }>(
      "SELECT key_last_four, status FROM request_log",
    );
    expect(all.some((row) => row.key_last_four === unknown.slice(-4))).toBe(false);
  });

  it("stores no secret, token or key the contract marks sensitive: webhook, live stream, dashboard key", async () => {
    const { id: brandId } = await server.brand({ rate_limit_per_minute: 10_000 });
    const { key } = await server.key(brandId);
    const { key: liveKey } = await server.key(brandId, { environment: "live" });

    const webhook = await server.call("POST", "/api/v1/webhooks", {
      key,
      body: HOOK,
      headers: { "idempotency-key": "hook-once" },
    });
    expect(webhook.status).toBe(201);
    const secret: string = webhook.body.secret;
    const replay = await server.call("POST", "/api/v1/webhooks", {
      key,
      body: HOOK,
      headers: { "idempotency-key": "hook-once" },
    });
    expect(replay.body.secret).toBe(secret);
    const started = await server.call("POST", "/api/v1/streams", { key: liveKey, body: streamBody() });
    expect(started.status).toBe(201);
    const viewerToken: string = started.body.viewer_token;
    expect(viewerToken).toMatch(/^vt_/);
    const owner = await member(server, brandId, `owner-${randomUUID()}@example.com`);
    const created = await owner.send("POST", "/modes/test/keys", { name: "from the dashboard", scopes: ["logs:read"] });
    expect(created.status).toBe(201);
    const dashboardKey: string = created.body.key;
    // A key pasted where the contract expects none: caught by its prefix.
    const pasted = await server.call("POST", "/api/v1/streams", {
      key,
      body: streamBody({ product_name: `Launch ${dashboardKey} ${secret}` }),
    });
    expect(pasted.status).toBe(201);
    await server.call("GET", `/api/v1/streams?status=${dashboardKey}`, { key });

    await server.flushRequestLog();
    const stored = await storedText(server);
    for (const sensitive of [secret, viewerToken, dashboardKey, key, liveKey]) expect(stored).not.toContain(sensitive);
    expect(stored).toContain("[redacted]");

    // What a partner reads: the secret's place says so; the replay is marked.
    const hooks = await logOf(server, dashboardKey, "?path=/webhooks&method=POST");
    expect(hooks.map((entry) => entry.replayed)).toEqual([true, false]);
    expect(hooks[1]).toMatchObject({ status: 201, idempotency_key: "hook-once" });
    const detail = await server.call("GET", `/api/v1/requests/${hooks[1]!.request_id}`, { key: dashboardKey });
    expect(detail.status).toBe(200);
    expect(JSON.parse(detail.body.request_body)).toEqual(HOOK);
    expect(JSON.parse(detail.body.response_body)).toMatchObject({ secret: "[redacted]", url: HOOK.url, active: true });
    const liveStart = (await logOf(server, liveKey, "?path=/streams"))[0]!;
    const liveDetail = await server.call("GET", `/api/v1/requests/${liveStart.request_id}`, { key: liveKey });
    expect(JSON.parse(liveDetail.body.response_body)).toMatchObject({
      viewer_token: "[redacted]",
      status: "preparing",
    });
  });

  it("filters by status, method, path and time, pages newest first, and is the key's brand and mode only", async () => {
    const { id: brandId } = await server.brand({ rate_limit_per_minute: 10_000 });
    const { key } = await server.key(brandId);
    const other = await server.tenant({ rate_limit_per_minute: 10_000 });
    const start = server.clock();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await server.call("GET", `/api/v1/streams?limit=${i + 1}`, { key });
      ids.push(answer.headers.get("request-id")!);
      server.clock.advance(1_000);
    }
    await server.call("GET", `/api/v1/streams/${randomUUID()}`, { key });
    await server.call("POST", "/api/v1/webhooks", { key, body: { url: "http://not-https.example.com", events: [] } });
    await server.call("GET", "/api/v1/analytics", { key });

    const newest = await logOf(server, key);
    expect(newest.map((entry) => entry.path).slice(0, 3)).toEqual([
      "/analytics",
      "/webhooks",
      expect.stringMatching(/^\/streams\//),
    ]);
    expect((await logOf(server, key, "?status=4xx")).map((entry) => entry.status)).toEqual([400, 404]);
    expect((await logOf(server, key, "?status=404")).length).toBe(1);
    expect((await logOf(server, key, "?method=POST")).map((entry) => entry.path)).toEqual(["/webhooks"]);
    expect((await logOf(server, key, "?path=/streams")).length).toBe(6);
    expect((await logOf(server, key, "?path=/stream")).length).toBe(0);
    const since = new Date(start.getTime() + 3_000).toISOString();
    const recent = await logOf(server, key, `?path=/streams&since=${since}`);
    expect(recent.length).toBe(3);
    expect(recent.every((entry) => entry.created_at >= since)).toBe(true);
    // The same time with an offset, its `+` unencoded (a space once decoded), as curl and Postman send it.
    const offset = new Date(Date.parse(since) + 3_600_000).toISOString().replace("Z", "+01:00");
    expect((await logOf(server, key, `?path=/streams&since=${offset}`)).map((entry) => entry.id)).toEqual(
      recent.map((entry) => entry.id),
    );

    // Pages of two, newest first, down to the first request.
    const pages: string[][] = [];
    let after: string | undefined;
    for (;;) {
      const answer = await server.call(
        "GET",
        `/api/v1/requests?path=/streams&limit=2${after ? `&starting_after=${after}` : ""}`,
        { key },
      );
      pages.push(answer.body.requests.map((entry: { request_id: string }) => entry.request_id));
      if (!answer.body.has_more) break;
      after = answer.body.requests.at(-1).id;
    }
    expect(pages.flat().slice(1)).toEqual([...ids].reverse());
    expect(pages.map((page) => page.length)).toEqual([2, 2, 2]);
    // The SDK walks the same pages.
    const client = createClient({ baseUrl: `${server.baseUrl}/api/v1`, apiKey: key, retry: { maxRetries: 0 } });
    const walked: string[] = [];
    for await (const entry of client.requests.listAll({ path: "/streams", limit: 2 })) walked.push(entry.request_id);
    expect(walked).toEqual(pages.flat());
    expect((await client.requests.retrieve(ids[1]!)).request.query).toBe("limit=2");

    // A limit out of range is clamped, never a 400; a malformed filter is.
    const clamped = await server.call("GET", "/api/v1/requests?limit=1000", { key });
    expect(clamped.status).toBe(200);
    expect((await server.call("GET", "/api/v1/requests?limit=0", { key })).body.requests.length).toBe(1);
    for (const bad of ["status=4x", "status=99", "method=get", "path=streams", "since=yesterday", "starting_after=5"]) {
      const refused = await server.call("GET", `/api/v1/requests?${bad}`, { key });
      expect(refused.status, bad).toBe(400);
      expect(refused.body.error.code).toBe("invalid_fields");
    }

    // Another brand's, and another mode's, are not there.
    const theirs = await server.call("GET", `/api/v1/requests/${ids[0]}`, { key: other.key });
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.code).toBe("not_found");
    const { key: liveKey } = await server.key(brandId, { environment: "live" });
    expect((await server.call("GET", `/api/v1/requests/${ids[0]}`, { key: liveKey })).status).toBe(404);
    expect((await server.call("GET", "/api/v1/requests/not%20an%20id", { key })).status).toBe(404);
    const mine = await server.call("GET", `/api/v1/requests/${ids[0]}`, { key });
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({ request: { request_id: ids[0], query: "limit=1" }, request_body: null });

    // A key without logs:read may not read it.
    const { key: noLogs } = await server.key(brandId, { scopes: ["streams:read"] });
    const scoped = await server.call("GET", "/api/v1/requests", { key: noLogs });
    expect(scoped.status).toBe(403);
    expect(scoped.body.error.message).toContain("logs:read");
  });

  it("the dashboard's Logs reads the mode's log for every role", async () => {
    const { id: brandId } = await server.brand({ rate_limit_per_minute: 10_000 });
    const { key } = await server.key(brandId);
    const sent = await server.call("GET", `/api/v1/streams/${randomUUID()}`, { key });
    await server.flushRequestLog();
    const viewer = await member(server, brandId, `viewer-${randomUUID()}@example.com`, "viewer");
    const list = await viewer.send("GET", "/modes/test/requests?status=4xx");
    expect(list.status).toBe(200);
    expect(list.body.requests.map((entry: { request_id: string }) => entry.request_id)).toEqual([
      sent.headers.get("request-id"),
    ]);
    const one = await viewer.send("GET", `/modes/test/requests/${sent.headers.get("request-id")}`);
    expect(one.status).toBe(200);
    expect(JSON.parse(one.body.response_body).error.code).toBe("not_found");
    expect((await viewer.send("GET", "/modes/live/requests")).body.requests).toEqual([]);
  });

  it("counts what it writes in /metrics", async () => {
    await server.flushRequestLog();
    const metrics = await server.call("GET", "/metrics", { key: METRICS_TOKEN });
    expect(metrics.text).toMatch(/^request_log_written_total [1-9]/m);
    expect(metrics.text).toMatch(/^request_log_dropped_total\{reason="write_failed"\} 0$/m);
  });

  it("finds a request by its id through the request-id index, not by walking a brand's long log", async () => {
    const { brandId } = await server.tenant();
    const at = server.clock().getTime() - 60_000;
    for (let batch = 0; batch < 25; batch++)
      await insertRequestLogRows(server.db, bulkRows(brandId, "test", 200, at, `req_plan_${batch}_`));
    try {
      await server.db.query("ANALYZE request_log");
      // The statement the lookup sends, explained as the planner would run it on the analysed table.
      const sent: { sql: string; params: unknown[] }[] = [];
      const recorder = {
        query: async (sql: string, params: unknown[] = []) => {
          sent.push({ sql, params });
          return [];
        },
      } as unknown as Queryable;
      await findRequestLogEntry(recorder, { brandId, mode: "test" }, "req_unknown");
      const plan = (await server.db.query<{ "QUERY PLAN": string }>(`EXPLAIN ${sent[0]!.sql}`, sent[0]!.params))
        .map((row) => row["QUERY PLAN"])
        .join("\n");
      expect(plan).toContain("request_log_request_id");
      expect(plan).not.toContain("request_log_newest");
    } finally {
      // The other tests count the log's rows across brands.
      await server.db.query("DELETE FROM request_log WHERE brand_id = $1", [brandId]);
      await server.db.query("DELETE FROM request_log_counts WHERE brand_id = $1", [brandId]);
    }
  });

  it("keeps at most the ceiling per brand and mode, and nothing past the retention, in bounded batches", async () => {
    const busy = await server.tenant();
    const quiet = await server.tenant();
    const rowsOf = (brandId: string, mode: "test" | "live", count: number, at: number) =>
      bulkRows(brandId, mode, count, at, "req_ceiling_");
    const now = server.clock().getTime();
    await insertRequestLogRows(server.db, rowsOf(busy.brandId, "test", 700, now - 60_000));
    await insertRequestLogRows(server.db, rowsOf(busy.brandId, "live", 50, now - 60_000));
    await insertRequestLogRows(server.db, rowsOf(quiet.brandId, "test", 40, now - 15 * 24 * 3_600_000));
    await insertRequestLogRows(server.db, rowsOf(quiet.brandId, "test", 60, now - 60_000));
    expect(await storedRequestCount(server.db, busy.brandId, "test")).toBe(700);

    // Batches of 250: each transaction deletes at most that of each kind, and another follows while
    // one comes back full. The database as the retention sees it, noting each transaction's deletes.
    const transactions: unknown[] = [];
    const db = server.db;
    const watched = {
      engine: db.engine,
      query: db.query.bind(db),
      exec: db.exec.bind(db),
      close: db.close.bind(db),
      poolStats: db.poolStats.bind(db),
      transaction: async <T>(work: (tx: Queryable) => Promise<T>) => {
        const result = await db.transaction(work);
        transactions.push(result);
        return result;
      },
    } as Database;
    const retention = requestLogRetention({ retentionDays: 14, maxRowsPerBrand: 200 }, { batch: 250 });
    const passes: number[] = [];
    for (let pass = 0; pass < 3; pass++) passes.push(await retention(watched, server.clock()));
    expect(passes).toEqual([250 + 40 + 250, 0, 0]);
    expect(transactions).toEqual([
      { over: 250, aged: 40 },
      { over: 250, aged: 0 },
      { over: 0, aged: 0 },
    ]);
    expect(await storedRequestCount(server.db, busy.brandId, "test")).toBe(200);
    expect(await storedRequestCount(server.db, busy.brandId, "live")).toBe(50);
    expect(await storedRequestCount(server.db, quiet.brandId, "test")).toBe(60);
    const [kept] = await server.db.query<{ n: string | number; oldest: string }>(
      "SELECT count(*) AS n, min(id::text) AS oldest FROM request_log WHERE brand_id = $1 AND mode = 'test'",
      [busy.brandId],
    );
    expect(Number(kept!.n)).toBe(200);
    // The newest are kept: the oldest kept is the 501st made.
    const [cut] = await server.db.query<{ n: string | number }>(
      "SELECT count(*) AS n FROM request_log WHERE brand_id = $1 AND mode = 'test' AND id < $2::uuid",
      [busy.brandId, kept!.oldest],
    );
    expect(Number(cut!.n)).toBe(0);
    const [aged] = await server.db.query<{ n: string | number }>(
      "SELECT count(*) AS n FROM request_log WHERE id < $1::uuid",
      [lowestTimeOrderedId(now - 14 * 24 * 3_600_000)],
    );
    expect(Number(aged!.n)).toBe(0);
  });
});

const postgresSkip = postgresSkipReason();

describe.skipIf(postgresSkip !== null)("the request log while its table is locked (PostgreSQL)", () => {
  let server: TestServer;
  let locker: pg.Client;

  beforeAll(async () => {
    server = await startTestServer({
      engine: "postgres",
      config: {
        metricsToken: METRICS_TOKEN,
        databasePool: {
          max: 10,
          acquireTimeoutMs: 5_000,
          statementTimeoutMs: 1_000,
          idleInTransactionTimeoutMs: 30_000,
        },
      },
      observability: createObservability({ logger: silentLogger(), metrics: true }),
    });
  });
  afterAll(async () => {
    await locker?.end().catch(() => undefined);
    await server?.close();
  });

  it("answers every request promptly, drops the batches it cannot write and counts them, then logs again", async () => {
    const { brandId, key } = await server.tenant({ rate_limit_per_minute: 10_000 });
    const url = await server.db.query<{ db: string }>("SELECT current_database() AS db");
    const base = new URL(process.env.TEST_DATABASE_URL!);
    base.pathname = `/${url[0]!.db}`;
    locker = new pg.Client({ connectionString: base.toString() });
    await locker.connect();
    await locker.query("BEGIN");
    await locker.query("LOCK TABLE request_log IN ACCESS EXCLUSIVE MODE");

    const slowest: number[] = [];
    const ends = Date.now() + 3_000;
    let answered = 0;
    while (Date.now() < ends) {
      const started = performance.now();
      const write = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
      expect(write.status).toBe(201);
      const read = await server.call("GET", `/api/v1/streams/${write.body.stream_id}`, { key });
      expect(read.status).toBe(200);
      expect((await server.call("DELETE", `/api/v1/streams/${write.body.stream_id}`, { key })).status).toBe(200);
      slowest.push(performance.now() - started);
      answered += 3;
    }
    // Three requests each time, none waiting on the lock (the statement time-out is 1 s).
    expect(Math.max(...slowest)).toBeLessThan(750);
    expect(answered).toBeGreaterThan(15);
    await server.flushRequestLog();
    const during = await server.call("GET", "/metrics", { key: METRICS_TOKEN });
    const dropped = Number(/^request_log_dropped_total\{reason="write_failed"\} (\d+)$/m.exec(during.text)?.[1]);
    expect(dropped).toBeGreaterThan(0);

    await locker.query("ROLLBACK");
    const after = await server.call("GET", "/api/v1/streams", { key });
    expect(after.status).toBe(200);
    await server.flushRequestLog();
    const logged = await server.db.query<{ request_id: string }>(
      "SELECT request_id FROM request_log WHERE brand_id = $1",
      [brandId],
    );
    expect(logged.map((row) => row.request_id)).toContain(after.headers.get("request-id"));
  });
});

const clusterReason = postgresSkip ?? clusterSkipReason();

describe.skipIf(clusterReason !== null)("the request log across a database restart (PostgreSQL)", () => {
  const DATABASE = "lsh_request_log_restart";
  let cluster: PgCluster;
  let db: Database;
  let server: TestServer;

  beforeAll(async () => {
    cluster = await createCluster();
    await cluster.createDatabase(DATABASE);
    db = await openDatabase(cluster.url(DATABASE), {
      postgres: {
        poolMax: 10,
        acquireTimeoutMs: 5_000,
        statementTimeoutMs: 2_000,
        idleInTransactionTimeoutMs: 5_000,
        probeTimeoutMs: 2_000,
      },
    });
    await migrate(db);
    await seedCreators(db);
    server = await startTestServer({
      engine: "postgres",
      database: db,
      config: { metricsToken: METRICS_TOKEN },
      observability: createObservability({ logger: silentLogger(), metrics: true }),
    });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await db?.close();
    await cluster?.cleanup();
  }, 60_000);

  it("answers within the database's time-outs while it restarts, loses no entry silently, then logs again", async () => {
    const { brandId, key } = await server.tenant({ rate_limit_per_minute: 1_000_000, max_active_streams: 100_000 });
    // Acquiring a connection, then a statement and its rollback, each up to its time-out, and slack.
    const bound = 5_000 + 2 * 2_000 + 4_000;
    const answers: Array<{ status: number; code: string | undefined; ms: number }> = [];
    let restarting = true;
    const restart = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      await cluster.restart();
      restarting = false;
    })();
    const client = async () => {
      while (restarting) {
        const started = performance.now();
        const answer = await server.call("GET", "/api/v1/streams", { key });
        answers.push({ status: answer.status, code: answer.body?.error?.code, ms: performance.now() - started });
      }
    };
    await Promise.all([restart, client(), client(), client()]);

    const slow = answers.filter((answer) => answer.ms > bound);
    expect(slow, JSON.stringify(slow)).toEqual([]);
    const wrong = answers.filter(
      (answer) => answer.status !== 200 && !(answer.status === 500 && answer.code === "db_error"),
    );
    expect(wrong, JSON.stringify(wrong)).toEqual([]);

    // Serving, and logging, again.
    let after: Awaited<ReturnType<TestServer["call"]>> | undefined;
    for (let attempt = 0; attempt < 30 && after?.status !== 200; attempt++) {
      after = await server.call("GET", "/api/v1/streams", { key });
      if (after.status !== 200) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(after?.status).toBe(200);
    await server.flushRequestLog();
    const rows = await db.query<{ request_id: string }>("SELECT request_id FROM request_log WHERE brand_id = $1", [
      brandId,
    ]);
    expect(rows.map((row) => row.request_id)).toContain(after!.headers.get("request-id"));
    // Every request answered 200 was recorded: written, or dropped and counted; none lost unseen.
    const metrics = await server.call("GET", "/metrics", { key: METRICS_TOKEN });
    const dropped = Number(/^request_log_dropped_total\{reason="write_failed"\} (\d+)$/m.exec(metrics.text)?.[1]);
    const succeeded = answers.filter((answer) => answer.status === 200).length + 1;
    expect(rows.length + dropped).toBeGreaterThanOrEqual(succeeded);
    expect(rows.length + dropped).toBeLessThanOrEqual(answers.length + 1);
  }, 120_000);
});
