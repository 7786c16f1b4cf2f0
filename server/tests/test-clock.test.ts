// The test clock (GET /test-clock, POST /test-clock/advance) on both engines: what an advance
// makes happen in test mode (the time-out of a stream marked sim:never-joins, the end of a
// 30-minute stream, a failing receiver's five retries), that every test-mode time follows the
// clock and the signature's t does not, and that live mode is untouched. Then two server
// processes on one PostgreSQL: the clock is the brand's, not the process's.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook } from "../../sdk/index.ts";
import { testDatabaseUrl } from "../config.ts";
import { httpsTransport } from "../providers/webhook-transport.ts";
import {
  ADMIN_TOKEN,
  availableEngines,
  freshDatabase,
  postgresSkipReason,
  scratchPostgresDatabase,
  startTestServer,
  streamBody,
  type TestServer,
} from "../../testkit/harness.ts";
import { member } from "../../testkit/dashboard-browser.ts";
import { failingDatabase } from "../../testkit/failing-database.ts";
import { startReceiver } from "../../testkit/https-receiver.ts";
import { type RunningProcess, runServer, serverOrigin, stop } from "../../testkit/server-process.ts";

const MINUTE = 60;
const HOUR = 3_600;
const ms = (iso: string) => Date.parse(iso);

describe.each(availableEngines())("the test clock (%s)", (engine) => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let server: TestServer;
  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer({
      engine,
      config: { webhookAllowHosts: ["localhost"] },
      delivery: {
        transport: httpsTransport({
          timeoutMs: 500,
          allowHosts: ["localhost"],
          resolver: async () => [{ address: "127.0.0.1", family: 4 }],
          ca: receiver.cert,
        }),
        timeoutMs: 500,
        // The server's default schedule: retries after 1 minute, 5 minutes, 30 minutes, 2 hours, 6 hours.
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  const advance = (key: string, seconds: number) =>
    server.call("POST", "/api/v1/test-clock/advance", { key, body: { seconds } });
  const streamOf = async (key: string, id: string) => (await server.call("GET", `/api/v1/streams/${id}`, { key })).body;
  const webhook = async (key: string, path: string, events: string[]) => {
    const created = await server.call("POST", "/api/v1/webhooks", { key, body: { url: receiver.url(path), events } });
    expect(created.status).toBe(201);
    return created.body as { webhook_id: string; secret: string };
  };
  const hooksAt = (path: string) => receiver.hooks().filter((request) => request.path === path);
  const signedAt = (header: unknown) => Number(/t=(\d+)/.exec(String(header))![1]);

  it("reads and advances the brand's clock, never back, at most 7 days a call; a live key gets 403 test_mode_only", async () => {
    const { brandId, key } = await server.tenant();
    const start = server.clock().getTime();
    expect((await server.call("GET", "/api/v1/test-clock", { key })).body).toEqual({
      now: new Date(start).toISOString(),
      offset_seconds: 0,
    });
    const moved = await advance(key, 2 * HOUR);
    expect(moved.status).toBe(200);
    expect(moved.body).toEqual({ now: new Date(start + 2 * HOUR * 1000).toISOString(), offset_seconds: 2 * HOUR });
    expect((await advance(key, 604_800)).body.offset_seconds).toBe(2 * HOUR + 604_800);
    server.clock.advance(1_000);
    expect((await server.call("GET", "/api/v1/test-clock", { key })).body).toEqual({
      now: new Date(start + 1_000 + (2 * HOUR + 604_800) * 1000).toISOString(),
      offset_seconds: 2 * HOUR + 604_800,
    });

    for (const [body, code] of [
      [{ seconds: 0 }, "invalid_fields"],
      [{ seconds: -60 }, "invalid_fields"],
      [{ seconds: 604_801 }, "invalid_fields"],
      [{ seconds: 1.5 }, "invalid_fields"],
      [{}, "missing_fields"],
    ] as const) {
      const refused = await server.call("POST", "/api/v1/test-clock/advance", { key, body });
      expect([refused.status, refused.body.error.code]).toEqual([400, code]);
    }
    expect((await server.call("GET", "/api/v1/test-clock", { key })).body.offset_seconds).toBe(2 * HOUR + 604_800);

    // Another key of the brand sees the same clock; another brand's is its own.
    const second = await server.key(brandId);
    expect((await server.call("GET", "/api/v1/test-clock", { key: second.key })).body.offset_seconds).toBe(
      2 * HOUR + 604_800,
    );
    const other = await server.tenant();
    expect((await server.call("GET", "/api/v1/test-clock", { key: other.key })).body.offset_seconds).toBe(0);

    const live = await server.key(brandId, { environment: "live" });
    for (const [method, path, body] of [
      ["GET", "/api/v1/test-clock", undefined],
      ["POST", "/api/v1/test-clock/advance", { seconds: 60 }],
    ] as const) {
      const refused = await server.call(method, path, { key: live.key, body });
      expect([refused.status, refused.body.error.code]).toEqual([403, "test_mode_only"]);
    }
    const readOnly = await server.key(brandId, { scopes: ["streams:read"] });
    const unscoped = await server.call("POST", "/api/v1/test-clock/advance", {
      key: readOnly.key,
      body: { seconds: 60 },
    });
    expect([unscoped.status, unscoped.body.error.code]).toEqual([403, "insufficient_scope"]);
  });

  it("sim:never-joins: a test stream stays preparing until the 5-minute time-out, then error with stream.error signed in real time", async () => {
    receiver.behave("ok");
    const { key } = await server.tenant();
    const hook = await webhook(key, "/never-joins", ["stream.started", "stream.error"]);
    const created = await server.call("POST", "/api/v1/streams", {
      key,
      body: streamBody({ product_name: "Quiet sim:never-joins" }),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: "preparing", test: true, ws_url: null, viewer_token: null });
    const id = created.body.stream_id as string;
    await server.deliver();
    expect(hooksAt("/never-joins")).toEqual([]);

    expect((await advance(key, 5 * MINUTE - 1)).status).toBe(200);
    expect(await streamOf(key, id)).toMatchObject({ status: "preparing", started_at: null, ended_at: null });

    // The answer comes once the time-out has happened: read at once, no sweep in between.
    const moved = await advance(key, 1);
    const failed = await streamOf(key, id);
    expect(failed).toMatchObject({ status: "error", started_at: null });
    expect(ms(failed.ended_at) - ms(created.body.created_at)).toBe(5 * MINUTE * 1000);
    expect(ms(moved.body.now)).toBeGreaterThanOrEqual(ms(failed.ended_at));

    expect(await server.deliver()).toBe(1);
    const [delivered] = hooksAt("/never-joins");
    const signature = delivered!.headers["x-service-signature"] as string;
    // The signature's t is the process clock, not the test clock: receivers check its age.
    expect(signedAt(signature)).toBe(Math.floor(server.clock().getTime() / 1000));
    const event = verifyWebhook(delivered!.body, signature, hook.secret, { now: () => server.clock().getTime() });
    expect(event).toMatchObject({ type: "stream.error", data: { stream_id: id, status: "error" } });
    expect(event.created_at).toBe(failed.ended_at);
  });

  it("a 30-minute test stream ends when the clock passes 30 minutes: ended_at − started_at is 30 minutes", async () => {
    receiver.behave("ok");
    const { key } = await server.tenant();
    await webhook(key, "/thirty", ["stream.ended"]);
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody({ duration_minutes: 30 }) });
    expect(created.body.status).toBe("live");
    const id = created.body.stream_id as string;
    expect((await streamOf(key, id)).status).toBe("live");

    await advance(key, 31 * MINUTE);
    const ended = await streamOf(key, id);
    expect(ended.status).toBe("ended");
    expect(ms(ended.ended_at) - ms(ended.started_at)).toBe(30 * MINUTE * 1000);
    expect(ended.started_at).toBe(created.body.created_at);
    expect(await server.deliver()).toBe(1);
    const event = JSON.parse(hooksAt("/thirty")[0]!.body);
    expect(event).toMatchObject({ type: "stream.ended", created_at: ended.ended_at, data: { status: "ended" } });

    // Test-mode times, listed and in analytics, are on the clock: the stream counts 30 minutes.
    const listed = (await server.call("GET", "/api/v1/streams?status=ended", { key })).body.streams;
    expect(listed.map((stream: { id: string }) => stream.id)).toEqual([id]);
    const analytics = (await server.call("GET", "/api/v1/analytics?period=24h", { key })).body;
    expect(analytics).toMatchObject({ total_streams: 1, total_minutes: 30 });
    // A week later on the clock, the stream is out of the 24-hour period.
    await advance(key, 7 * 24 * HOUR);
    expect((await server.call("GET", "/api/v1/analytics?period=24h", { key })).body.total_streams).toBe(0);
  });

  it("a failing receiver: advancing 9 hours makes the five retries, in schedule order, and the delivery is failed", async () => {
    receiver.behave("fail");
    const { key } = await server.tenant();
    const hook = await webhook(key, "/failing", ["stream.started"]);
    await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    expect(await server.deliver()).toBe(1);
    const [pending] = (await server.call("GET", "/api/v1/webhooks/deliveries", { key })).body.deliveries;
    expect(pending).toMatchObject({ status: "pending", attempt: 1 });

    await advance(key, 9 * HOUR);
    // Each pass makes the attempt due (the retry recorded by one falls due at once for the next).
    let passes = 0;
    while ((await server.deliver()) > 0) passes += 1;
    expect(passes).toBe(5);

    const detail = (await server.call("GET", `/api/v1/webhooks/deliveries/${pending.delivery_id}`, { key })).body;
    expect(detail.delivery).toMatchObject({
      status: "failed",
      attempt: 6,
      response_status: 500,
      next_attempt_at: null,
    });
    expect(detail.attempts.map((attempt: { attempt: number }) => attempt.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    const times = detail.attempts.map((attempt: { attempted_at: string }) => ms(attempt.attempted_at));
    const gaps = times.slice(1).map((time: number, i: number) => Math.round((time - times[i]) / 1000));
    expect(gaps).toEqual([MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR]);
    const clockNow = ms((await server.call("GET", "/api/v1/test-clock", { key })).body.now);
    expect(times.at(-1)).toBeLessThan(clockNow);

    const sent = hooksAt("/failing");
    expect(sent).toHaveLength(6);
    expect(new Set(sent.map((request) => JSON.parse(request.body).id)).size).toBe(1);
    for (const request of sent)
      verifyWebhook(request.body, request.headers["x-service-signature"] as string, hook.secret, {
        now: () => server.clock().getTime(),
      });

    // Recovered once the receiver is fixed: `since` on either clock is accepted, and the new
    // series' attempt is dated on the test clock, after the others.
    receiver.behave("ok");
    const recover = (since: number) =>
      server.call("POST", "/api/v1/webhooks/recover", {
        key,
        body: { webhook_id: hook.webhook_id, since: new Date(since).toISOString() },
      });
    const future = await recover(clockNow + 60_000);
    expect([future.status, future.body.error.code]).toEqual([400, "invalid_fields"]);
    expect((await recover(clockNow - 10 * HOUR * 1000)).body).toEqual({ queued: 1, has_more: false });
    expect(await server.deliver()).toBe(1);
    const recovered = (await server.call("GET", `/api/v1/webhooks/deliveries/${pending.delivery_id}`, { key })).body;
    expect(recovered.delivery).toMatchObject({ status: "succeeded", attempt: 1 });
    expect(ms(recovered.attempts.at(-1).attempted_at)).toBe(clockNow);
    expect((await recover(server.clock().getTime() - HOUR * 1000)).status).toBe(202);
  });

  it("leaves live mode alone: a live stream, its delivery, the wallet and live analytics are untouched by a 7-day advance", async () => {
    receiver.behave("fail");
    const { brandId, key: liveKey } = await server.tenant({ environment: "live", credits_cents: 100_000 });
    const testKey = (await server.key(brandId)).key;
    await webhook(liveKey, "/live-mode", ["stream.started"]);
    const created = await server.call("POST", "/api/v1/streams", {
      key: liveKey,
      body: streamBody({ duration_minutes: 30 }),
    });
    expect(created.body.status).toBe("preparing");
    server.clock.advance(3_000); // the simulated host joins
    await server.sweep();
    await server.deliver();
    const snapshot = async () => ({
      stream: await streamOf(liveKey, created.body.stream_id),
      deliveries: (await server.call("GET", "/api/v1/webhooks/deliveries", { key: liveKey })).body.deliveries,
      brand: (await server.call("GET", `/admin/v1/brands/${brandId}`, { key: ADMIN_TOKEN })).body,
      analytics: (await server.call("GET", "/api/v1/analytics?period=24h", { key: liveKey })).body,
    });
    const before = await snapshot();
    expect(before.stream.status).toBe("live");
    expect(before.deliveries).toMatchObject([{ status: "pending", attempt: 1 }]);
    expect(before.brand.credits_held_cents).toBe(900);

    expect((await advance(testKey, 604_800)).status).toBe(200);
    await server.sweep();
    await server.deliver();
    expect(await snapshot()).toEqual(before);
    expect(hooksAt("/live-mode")).toHaveLength(1);
    receiver.behave("ok");
  });

  it("answers 500 db_error when the clock cannot be read or moved, and moves nothing", async () => {
    const fresh = await freshDatabase(engine);
    const failing = failingDatabase(fresh.db);
    const broken = await startTestServer({ engine, database: failing.db });
    try {
      const { key } = await broken.tenant();
      failing.failOn(/test_clocks/);
      for (const [method, path, body] of [
        ["GET", "/api/v1/test-clock", undefined],
        ["POST", "/api/v1/test-clock/advance", { seconds: 60 }],
      ] as const) {
        const answer = await broken.call(method, path, { key, body });
        expect([answer.status, answer.body.error.code]).toEqual([500, "db_error"]);
      }
      failing.failOn(null);
      expect((await broken.call("GET", "/api/v1/test-clock", { key })).body.offset_seconds).toBe(0);
    } finally {
      await broken.close();
      await fresh.drop();
    }
  });

  it("the dashboard's overview shows the test clock in test mode only", async () => {
    const { brandId, key } = await server.tenant();
    await advance(key, 3 * HOUR);
    const owner = await member(server, brandId, `clock-${engine}@example.com`);
    const test = (await owner.send("GET", "/modes/test/overview")).body;
    expect(test.test_clock).toEqual({
      now: new Date(server.clock().getTime() + 3 * HOUR * 1000).toISOString(),
      offset_seconds: 3 * HOUR,
    });
    const live = await owner.send("GET", "/modes/live/overview");
    expect(live.status).toBe(200);
    expect(live.body).not.toHaveProperty("test_clock");
  });
});

// Two processes on one PostgreSQL: an advance through one is the brand's clock in the other, its
// sweep and its delivery worker.
describe.skipIf(postgresSkipReason() !== null)("the test clock across two server processes on one PostgreSQL", () => {
  let scratch: Awaited<ReturnType<typeof scratchPostgresDatabase>>;
  const processes: RunningProcess[] = [];
  const bases: string[] = [];
  let hooks: Server;
  const received: Array<{ path: string; body: string }> = [];
  let hooksPort = 0;

  beforeAll(async () => {
    hooks = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        received.push({ path: req.url ?? "", body });
        res.writeHead(req.url === "/failing" ? 500 : 204).end();
      });
    });
    hooks.listen(0, "127.0.0.1");
    await once(hooks, "listening");
    hooksPort = (hooks.address() as AddressInfo).port;
    scratch = await scratchPostgresDatabase(testDatabaseUrl()!);
    for (let i = 0; i < 2; i++) {
      const running = runServer({
        DATABASE_URL: scratch.url,
        ADMIN_TOKEN,
        SWEEP_INTERVAL_MS: "50",
        WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
        LOG_LEVEL: "warn",
      });
      processes.push(running);
      // One after the other: the first migrates the database.
      bases.push(await serverOrigin(running, 120_000));
    }
  }, 180_000);
  afterAll(async () => {
    await Promise.all(processes.map((running) => stop(running)));
    await scratch?.drop();
    hooks?.close();
  });

  const call = async (base: string, method: string, path: string, key: string, body?: unknown) => {
    const response = await fetch(base + path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const until = async <T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it("an advance through one process moves the brand's clock, streams and retries in the other", async () => {
    const [a, b] = bases as [string, string];
    const brand = await call(a, "POST", "/admin/v1/brands", ADMIN_TOKEN, {
      name: "Two processes",
      vertical: "live-commerce",
      plan: "free",
    });
    const key = (
      await call(a, "POST", "/admin/v1/keys", ADMIN_TOKEN, {
        brand_id: brand.body.brand_id,
        name: "clock",
        environment: "test",
        scopes: ["streams:read", "streams:write", "webhooks:write"],
      })
    ).body.key as string;
    const otherBrand = await call(a, "POST", "/admin/v1/brands", ADMIN_TOKEN, {
      name: "Another brand",
      vertical: "live-commerce",
      plan: "free",
    });
    const otherKey = (
      await call(a, "POST", "/admin/v1/keys", ADMIN_TOKEN, {
        brand_id: otherBrand.body.brand_id,
        name: "clock",
        environment: "test",
        scopes: ["streams:write"],
      })
    ).body.key as string;

    await call(b, "POST", "/api/v1/webhooks", key, {
      url: `http://127.0.0.1:${hooksPort}/failing`,
      events: ["stream.started", "stream.error"],
    });
    const never = await call(b, "POST", "/api/v1/streams", key, streamBody({ product_name: "sim:never-joins" }));
    expect(never.body.status).toBe("preparing");
    // The first attempt of stream.started is made (by either process) before the clock moves.
    const started = await call(b, "POST", "/api/v1/streams", key, streamBody());
    const [first] = await until(async () => {
      const listed = await call(a, "GET", `/api/v1/webhooks/deliveries?stream_id=${started.body.stream_id}`, key);
      return listed.body.deliveries[0]?.attempt === 1 ? listed.body.deliveries : undefined;
    }, "the first attempt");

    const moved = await call(a, "POST", "/api/v1/test-clock/advance", key, { seconds: 9 * HOUR });
    expect(moved.body.offset_seconds).toBe(9 * HOUR);
    const seen = await call(b, "GET", "/api/v1/test-clock", key);
    expect(seen.body.offset_seconds).toBe(9 * HOUR);
    expect(Math.abs(ms(seen.body.now) - ms(moved.body.now))).toBeLessThan(5_000);
    expect((await call(b, "GET", "/api/v1/test-clock", otherKey)).body.offset_seconds).toBe(0);
    expect((await call(b, "GET", `/api/v1/streams/${never.body.stream_id}`, key)).body.status).toBe("error");

    // Both processes' workers share the retries: six attempts in schedule order within seconds.
    const detail = await until(async () => {
      const read = await call(b, "GET", `/api/v1/webhooks/deliveries/${first.delivery_id}`, key);
      return read.body.delivery.status === "failed" ? read.body : undefined;
    }, "the delivery to fail");
    const times = detail.attempts.map((attempt: { attempted_at: string }) => ms(attempt.attempted_at));
    const gaps = times.slice(1).map((time: number, i: number) => Math.round((time - times[i]) / 1000));
    expect(detail.attempts.map((attempt: { attempt: number }) => attempt.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(gaps).toEqual([MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR]);
    // And the stream.error of the stream that never joined reached the receiver.
    const errors = await until(async () => {
      const got = received.filter((request) => JSON.parse(request.body).type === "stream.error");
      return got.length > 0 ? got : undefined;
    }, "stream.error");
    expect(JSON.parse(errors[0]!.body).data.stream_id).toBe(never.body.stream_id);
  }, 60_000);
});
