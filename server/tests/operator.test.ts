import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../domain/keys.ts";
import { ADMIN_TOKEN, startTestServer, type TestServer } from "../testing/harness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const admin = (method: string, path: string, body?: unknown) => server.call(method, `/admin/v1${path}`, { key: ADMIN_TOKEN, body });

describe("operator API", () => {
  it("creates a brand with the plan's defaults and the spec's limits", async () => {
    const response = await admin("POST", "/brands", { name: "Acme Casino", vertical: "igaming", plan: "growth" });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      brand_id: expect.any(String),
      name: "Acme Casino",
      vertical: "igaming",
      plan: "growth",
      credits_cents: 0,
      credits_held_cents: 0,
      plan_minutes: 1000,
      minutes_used: 0,
      rate_limit_per_minute: 100,
      max_active_streams: 3,
      created_at: server.clock().toISOString(),
    });
    expect((await admin("GET", `/brands/${response.body.brand_id}`)).body).toEqual(response.body);
  });

  it("updates plan, credits and limits", async () => {
    const { body } = await admin("POST", "/brands", { name: "Shop", vertical: "live-commerce", plan: "starter" });
    const patched = await admin("PATCH", `/brands/${body.brand_id}`, { plan: "enterprise", credits_cents: 5000, rate_limit_per_minute: 1000 });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ plan: "enterprise", credits_cents: 5000, rate_limit_per_minute: 1000, plan_minutes: 0 });
  });

  it("creates a key shown once, stores only its SHA-256, and revokes it", async () => {
    const { body: brand } = await admin("POST", "/brands", { name: "K", vertical: "live-commerce", plan: "growth" });
    const created = await admin("POST", "/keys", { brand_id: brand.brand_id, name: "ci", environment: "live", scopes: ["streams:read"] });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^svc_live_[0-9A-Za-z]{32}$/);
    const stored = await server.db.query<{ key_hash: string }>("SELECT key_hash FROM api_keys WHERE id = $1", [created.body.key_id]);
    expect(stored[0]!.key_hash).toBe(hashApiKey(created.body.key));
    expect(JSON.stringify(await server.db.query("SELECT * FROM api_keys"))).not.toContain(created.body.key);
    expect((await server.call("GET", "/api/v1/streams", { key: created.body.key })).status).toBe(200);
    expect((await admin("DELETE", `/keys/${created.body.key_id}`)).body).toEqual({ key_id: created.body.key_id, revoked: true });
    expect((await server.call("GET", "/api/v1/streams", { key: created.body.key })).status).toBe(401);
  });

  it("answers 404 for unknown brands and keys, 400 for bad bodies", async () => {
    expect((await admin("GET", "/brands/6f1c2a52-0000-4000-8000-000000000001")).status).toBe(404);
    expect((await admin("DELETE", "/keys/6f1c2a52-0000-4000-8000-000000000001")).status).toBe(404);
    expect((await admin("POST", "/keys", { brand_id: "6f1c2a52-0000-4000-8000-000000000001", name: "x", environment: "test", scopes: ["streams:read"] })).status).toBe(404);
    const bad = await admin("POST", "/brands", { name: "X", vertical: "casino", plan: "growth" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_fields");
    expect((await admin("POST", "/brands", { vertical: "igaming", plan: "growth" })).body.error.code).toBe("missing_fields");
  });

  it("answers 401 without the operator token and never accepts an API key", async () => {
    const { key } = await server.tenant();
    expect((await server.call("GET", "/admin/v1/brands/6f1c2a52-0000-4000-8000-000000000001")).status).toBe(401);
    expect((await server.call("GET", "/admin/v1/brands/6f1c2a52-0000-4000-8000-000000000001", { key })).status).toBe(401);
  });

  it("lists a brand's webhook deliveries", async () => {
    const { brandId, key } = await server.tenant();
    await server.call("POST", "/api/v1/webhooks", { key, body: { url: "https://hooks.example.com/x", events: ["stream.started"] } });
    await server.call("POST", "/api/v1/streams", { key, body: { creator_id: (await server.call("GET", "/api/v1/creators")).body.creators[0].id, product_name: "p", platform: "kick" } });
    const response = await admin("GET", `/webhook-deliveries?brand_id=${brandId}`);
    expect(response.status).toBe(200);
    expect(response.body.deliveries).toEqual([expect.objectContaining({ event_type: "stream.started", status: "pending", attempt: 0 })]);
  });
});

describe("operator API disabled", () => {
  it("answers 404 when ADMIN_TOKEN is not set", async () => {
    const disabled = await startTestServer({ config: { adminToken: undefined } });
    try {
      const response = await disabled.call("GET", "/admin/v1/brands/6f1c2a52-0000-4000-8000-000000000001", { key: ADMIN_TOKEN });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe("not_found");
    } finally {
      await disabled.close();
    }
  });
});
