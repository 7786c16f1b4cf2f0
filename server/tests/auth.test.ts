import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, streamBody, type TestServer } from "../../testkit/harness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** Every authenticated endpoint of the endpoint index with the scope it requires. */
const AUTHENTICATED: Array<{ method: string; path: string; scope: string; body?: unknown }> = [
  { method: "POST", path: "/api/v1/streams", scope: "streams:write", body: streamBody() },
  { method: "GET", path: "/api/v1/streams", scope: "streams:read" },
  { method: "GET", path: "/api/v1/streams/6f1c2a52-0000-4000-8000-000000000001", scope: "streams:read" },
  { method: "DELETE", path: "/api/v1/streams/6f1c2a52-0000-4000-8000-000000000001", scope: "streams:write" },
  { method: "GET", path: "/api/v1/analytics", scope: "analytics:read" },
  {
    method: "POST",
    path: "/api/v1/webhooks",
    scope: "webhooks:write",
    body: { url: "https://hooks.example.com/x", events: ["stream.started"] },
  },
  { method: "GET", path: "/api/v1/webhooks", scope: "webhooks:write" },
  { method: "DELETE", path: "/api/v1/webhooks?id=6f1c2a52-0000-4000-8000-000000000001", scope: "webhooks:write" },
];

describe("authentication", () => {
  it("answers 401 unauthorized with byte-identical bodies for missing, malformed, unknown, revoked and expired keys", async () => {
    const { id } = await server.brand();
    const revoked = await server.key(id);
    await server.call("DELETE", `/admin/v1/keys/${revoked.keyId}`, { key: "test-admin-token-0123456789" });
    const expired = await server.key(id, { expiresAt: new Date(server.clock().getTime() - 1000).toISOString() });
    const variants = [
      await server.call("GET", "/api/v1/streams"),
      await server.call("GET", "/api/v1/streams", { headers: { authorization: "Bearer not-a-key" } }),
      await server.call("GET", "/api/v1/streams", { headers: { authorization: "bearer svc_test_" + "a".repeat(32) } }),
      await server.call("GET", "/api/v1/streams", { headers: { authorization: "Bearer " } }),
      await server.call("GET", "/api/v1/streams", { key: "svc_test_" + "a".repeat(32) }),
      await server.call("GET", "/api/v1/streams", { key: revoked.key }),
      await server.call("GET", "/api/v1/streams", { key: expired.key }),
    ];
    for (const response of variants) {
      expect(response.status).toBe(401);
      expect(response.text).toBe(variants[0]!.text);
    }
    expect(variants[0]!.body.error.code).toBe("unauthorized");
  });

  it("takes revocation into account on the very next request", async () => {
    const { id } = await server.brand();
    const { key, keyId } = await server.key(id);
    expect((await server.call("GET", "/api/v1/streams", { key })).status).toBe(200);
    await server.call("DELETE", `/admin/v1/keys/${keyId}`, { key: "test-admin-token-0123456789" });
    expect((await server.call("GET", "/api/v1/streams", { key })).status).toBe(401);
  });

  it("takes expiry into account on the first request after it, though the key was just used", async () => {
    const { id } = await server.brand();
    const { key } = await server.key(id, { expiresAt: new Date(server.clock().getTime() + 60_000).toISOString() });
    expect((await server.call("GET", "/api/v1/streams", { key })).status).toBe(200);
    server.clock.advance(60_000);
    expect((await server.call("GET", "/api/v1/streams", { key })).status).toBe(401);
  });

  it("takes a plan change into account on the very next request", async () => {
    const { id } = await server.brand({ plan: "growth" });
    const { key } = await server.key(id, { environment: "live" });
    expect((await server.call("GET", "/api/v1/streams", { key })).status).toBe(200);
    await server.call("PATCH", `/admin/v1/brands/${id}`, {
      key: "test-admin-token-0123456789",
      body: { plan: "starter" },
    });
    expect((await server.call("GET", "/api/v1/streams", { key })).body.error.code).toBe("plan_required");
  });

  it.each(AUTHENTICATED)(
    "when the key lacks $scope, $method $path answers 403 insufficient_scope",
    async ({ method, path, scope, body }) => {
      const { id } = await server.brand();
      const all = ["streams:read", "streams:write", "analytics:read", "webhooks:write"] as const;
      const { key } = await server.key(id, { scopes: all.filter((candidate) => candidate !== scope) });
      const response = await server.call(method, path, { key, body });
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe("insufficient_scope");
      expect(response.body.error.message).toContain(scope);
    },
  );

  it.each(AUTHENTICATED)(
    "with a live key below Growth, $method $path answers 402 plan_required",
    async ({ method, path, body }) => {
      const { id } = await server.brand({ plan: "starter" });
      const { key } = await server.key(id, { environment: "live" });
      const response = await server.call(method, path, { key, body });
      expect(response.status).toBe(402);
      expect(response.body.error.code).toBe("plan_required");
    },
  );

  it("exempts test keys from the plan requirement", async () => {
    const { id } = await server.brand({ plan: "free" });
    const { key } = await server.key(id, { environment: "test" });
    expect((await server.call("POST", "/api/v1/streams", { key, body: streamBody() })).status).toBe(201);
  });

  it("needs no key for GET / and GET /creators", async () => {
    expect((await server.call("GET", "/api/v1/")).status).toBe(200);
    expect((await server.call("GET", "/api/v1")).status).toBe(200);
    expect((await server.call("GET", "/api/v1/creators")).status).toBe(200);
  });
});

describe("check order", () => {
  it("reports 401 before the body is even parsed", async () => {
    const response = await server.call("POST", "/api/v1/streams", { rawBody: "{not json" });
    expect(response.body.error.code).toBe("unauthorized");
  });

  it("reports insufficient_scope before plan_required", async () => {
    const { id } = await server.brand({ plan: "free" });
    const { key } = await server.key(id, { environment: "live", scopes: ["streams:read"] });
    expect((await server.call("POST", "/api/v1/streams", { key, body: streamBody() })).body.error.code).toBe(
      "insufficient_scope",
    );
  });

  it("reports plan_required before body validation", async () => {
    const { id } = await server.brand({ plan: "starter" });
    const { key } = await server.key(id, { environment: "live" });
    expect((await server.call("POST", "/api/v1/streams", { key, rawBody: "{not json" })).body.error.code).toBe(
      "plan_required",
    );
  });

  it("reports missing_fields before invalid_fields", async () => {
    const { key } = await server.tenant();
    const response = await server.call("POST", "/api/v1/streams", {
      key,
      body: { creator_id: "x".repeat(100), platform: "myspace" },
    });
    expect(response.body.error.code).toBe("missing_fields");
    expect(response.body.error.message).toContain("product_name");
  });

  it("reports body validation before vertical_mismatch and invalid_creator", async () => {
    const { key } = await server.tenant({ vertical: "igaming" });
    const response = await server.call("POST", "/api/v1/streams", {
      key,
      body: streamBody({ creator_id: "avt_nobody", platform: "tiktok", product_name: "p".repeat(201) }),
    });
    expect(response.body.error.code).toBe("invalid_fields");
  });
});

describe("rate limit", () => {
  it("answers 429 rate_limited once the brand's per-minute limit is used, without Retry-After, and resets next minute", async () => {
    const { brandId, key } = await server.tenant({ rate_limit_per_minute: 3 });
    server.clock.set(new Date("2026-11-20T13:00:00.000Z"));
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await server.call("GET", "/api/v1/streams", { key })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await server.call("GET", "/api/v1/webhooks", { key });
    expect(limited.body.error.code).toBe("rate_limited");
    expect(limited.headers.get("retry-after")).toBeNull();
    // Test and live keys of one brand share the brand's window.
    const live = await server.key(brandId, { environment: "live" });
    expect((await server.call("GET", "/api/v1/streams", { key: live.key })).status).toBe(429);
    server.clock.advance(60_000);
    expect((await server.call("GET", "/api/v1/streams", { key })).status).toBe(200);
  });

  it("never limits GET /creators", async () => {
    server.clock.set(new Date("2026-11-20T14:00:00.000Z"));
    const statuses = new Set<number>();
    for (let i = 0; i < 120; i++) statuses.add((await server.call("GET", "/api/v1/creators")).status);
    expect([...statuses]).toEqual([200]);
  });

  it("does not count 401s against any brand", async () => {
    const { key } = await server.tenant({ rate_limit_per_minute: 2 });
    server.clock.set(new Date("2026-11-20T15:00:00.000Z"));
    for (let i = 0; i < 5; i++) await server.call("GET", "/api/v1/streams", { key: "svc_test_" + "b".repeat(32) });
    expect((await server.call("GET", "/api/v1/streams", { key })).status).toBe(200);
  });

  it("checks the rate limit before the scope", async () => {
    const { id } = await server.brand({ rate_limit_per_minute: 1 });
    const { key } = await server.key(id, { scopes: ["streams:read"] });
    server.clock.set(new Date("2026-11-20T16:00:00.000Z"));
    await server.call("GET", "/api/v1/streams", { key });
    expect((await server.call("POST", "/api/v1/streams", { key, body: streamBody() })).body.error.code).toBe(
      "rate_limited",
    );
  });
});
