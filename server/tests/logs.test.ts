import { afterEach, describe, expect, it } from "vitest";
import { createObservability } from "../observability/observability.ts";
import type { WebhookTransport } from "../providers/webhook-transport.ts";
import { failingDatabase } from "../../testkit/failing-database.ts";
import { ADMIN_TOKEN, freshDatabase, startTestServer, streamBody, type TestServer } from "../../testkit/harness.ts";
import { capturedLogs } from "../../testkit/log-capture.ts";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function loggedServer(options: Parameters<typeof startTestServer>[0] = {}, level: "info" | "debug" = "info") {
  const logs = capturedLogs(level);
  const server: TestServer = await startTestServer({
    engine: "pglite",
    observability: createObservability({ logger: logs.logger }),
    ...options,
  });
  closers.push(() => server.close());
  return { server, logs };
}

describe("the request log", () => {
  it("writes one JSON line per request, carrying the id its Request-Id header carried", async () => {
    const { server, logs } = await loggedServer();
    const { brandId, key } = await server.tenant();
    // The tenant was made through the operator API, whose requests are logged like any other.
    logs.take();
    const listed = await server.call("GET", "/api/v1/streams", { key, headers: { "x-request-id": "trace-abc.123" } });
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    const refused = await server.call("GET", "/api/v1/streams", { key: "svc_test_00000000000000000000000000000000" });
    const unknown = await server.call("GET", "/api/v1/nowhere?token=abc");

    // Every line is JSON with pino's fields, level by name.
    for (const line of logs.raw) expect(() => JSON.parse(line), line).not.toThrow();
    const lines = logs.take().filter((entry) => entry.msg === "request");
    expect(lines).toHaveLength(4);
    expect(listed.headers.get("request-id")).toBe("trace-abc.123");
    expect(lines.map((entry) => entry.request_id)).toEqual(
      [listed, created, refused, unknown].map((answer) => answer.headers.get("request-id")),
    );
    expect(lines[0]).toMatchObject({
      level: "info",
      method: "GET",
      operation: "listStreams",
      status: 200,
      brand_id: brandId,
      mode: "test",
    });
    expect(typeof lines[0]!.latency_ms).toBe("number");
    expect(typeof lines[0]!.time).toBe("string");
    expect(lines[1]).toMatchObject({ method: "POST", operation: "createStream", status: 201, brand_id: brandId });
    // A refusal says its code; an unauthenticated request names no brand.
    expect(lines[2]).toMatchObject({ operation: "listStreams", status: 401, code: "unauthorized" });
    expect(lines[2]).not.toHaveProperty("brand_id");
    expect(lines[3]).toMatchObject({ operation: "unknown", status: 404, code: "not_found" });
  });

  it("never writes the API key, a webhook secret, the Authorization header, a URL or a body", async () => {
    const transport: WebhookTransport = { send: async () => ({ ok: false, status: 503, error: "HTTP 503" }) };
    const { server, logs } = await loggedServer({ delivery: { transport } }, "debug");
    const { key } = await server.tenant();
    const hook = await server.call("POST", "/api/v1/webhooks", {
      key,
      body: { url: "https://hooks.example.com/in?sig=hunter2", events: ["stream.started"] },
    });
    expect(hook.status).toBe(201);
    await server.call("POST", "/api/v1/streams", { key, body: streamBody({ product_name: "Very secret product" }) });
    await server.call("GET", "/api/v1/streams", { key: `${key}x` });
    await server.deliver();

    const written = logs.raw.join("\n");
    expect(written.length).toBeGreaterThan(0);
    for (const secret of [
      key,
      key.slice(9),
      hook.body.secret,
      "authorization",
      "Bearer",
      "hooks.example.com",
      "hunter2",
      "Very secret product",
    ]) {
      expect(written, secret).not.toContain(secret);
    }
  });

  it("logs the operations endpoints at debug only (probes call them every few seconds)", async () => {
    const { server, logs } = await loggedServer();
    await server.call("GET", "/healthz");
    await server.call("GET", "/readyz");
    expect(logs.take()).toEqual([]);
    const debug = await loggedServer({}, "debug");
    await debug.server.call("GET", "/healthz");
    expect(debug.logs.take()).toMatchObject([{ level: "debug", msg: "request", operation: "healthz", status: 200 }]);
  });
});

describe("background work in the log", () => {
  it("logs each failed webhook attempt with its ids, attempt, status and what comes next", async () => {
    const transport: WebhookTransport = { send: async () => ({ ok: false, status: 500, error: "HTTP 500" }) };
    const { server, logs } = await loggedServer({ delivery: { transport, retryScheduleMs: [60_000] } });
    const { brandId, key } = await server.tenant();
    const hook = await server.call("POST", "/api/v1/webhooks", {
      key,
      body: { url: "https://hooks.example.com/in", events: ["stream.started"] },
    });
    await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    logs.take();

    await server.deliver();
    server.clock.advance(60_000);
    await server.deliver();
    const attempts = logs.take();
    const deliveries = await server.call("GET", `/admin/v1/webhook-deliveries?brand_id=${brandId}`, {
      key: ADMIN_TOKEN,
    });
    const delivery = deliveries.body.deliveries[0];
    expect(attempts).toMatchObject([
      {
        level: "warn",
        msg: "webhook attempt failed; will retry",
        delivery_id: delivery.delivery_id,
        webhook_id: hook.body.webhook_id,
        event_id: delivery.event_id,
        attempt: 1,
        response_status: 500,
        error: "HTTP 500",
      },
      { level: "warn", msg: "webhook attempt failed; no more attempts", attempt: 2, next_attempt_at: null },
    ]);
    // The retry was due a minute after the first attempt: now, on the manual clock.
    expect(attempts[0]!.next_attempt_at).toBe(server.clock().toISOString());
  });

  it("logs a sweep that moved streams, and nothing for one that did not", async () => {
    const { server, logs } = await loggedServer();
    const { key } = await server.tenant();
    await server.call("POST", "/api/v1/streams", { key, body: streamBody({ duration_minutes: 5 }) });
    logs.take();
    await server.sweep();
    expect(logs.take()).toEqual([]);
    server.clock.advance(5 * 60_000);
    await server.sweep();
    expect(logs.take()).toMatchObject([{ level: "info", msg: "lifecycle sweep moved streams", moved: 1 }]);
  });

  it("logs a 500 with the request id its response carried and the error", async () => {
    const fresh = await freshDatabase("pglite");
    closers.push(() => fresh.drop());
    const failing = failingDatabase(fresh.db);
    const { server, logs } = await loggedServer({ database: failing.db });
    const { key } = await server.tenant();
    logs.take();
    failing.failOn(/\bstreams\b/);
    const answer = await server.call("GET", "/api/v1/streams", { key });
    failing.failOn(null);
    expect(answer.status).toBe(500);
    const [error, request] = logs.take();
    expect(error).toMatchObject({
      level: "error",
      msg: "server error",
      request_id: answer.headers.get("request-id"),
      operation: "listStreams",
      error: { type: "DatabaseError", message: expect.stringContaining("injected database failure") },
    });
    expect(error!.error.stack).toContain("DatabaseError");
    expect(request).toMatchObject({
      msg: "request",
      status: 500,
      code: "db_error",
      request_id: answer.headers.get("request-id"),
    });
  });
});
