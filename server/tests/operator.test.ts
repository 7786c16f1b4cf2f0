import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../domain/keys.ts";
import type { DeliveryOutcome } from "../providers/webhook-transport.ts";
import { ADMIN_TOKEN, startTestServer, streamBody, type TestServer } from "../../testkit/harness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const admin = (method: string, path: string, body?: unknown) =>
  server.call(method, `/admin/v1${path}`, { key: ADMIN_TOKEN, body });

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
    const patched = await admin("PATCH", `/brands/${body.brand_id}`, {
      plan: "enterprise",
      credits_cents: 5000,
      rate_limit_per_minute: 1000,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      plan: "enterprise",
      credits_cents: 5000,
      rate_limit_per_minute: 1000,
      plan_minutes: 0,
    });
  });

  it("creates a key shown once, stores only its SHA-256, and revokes it", async () => {
    const { body: brand } = await admin("POST", "/brands", { name: "K", vertical: "live-commerce", plan: "growth" });
    const created = await admin("POST", "/keys", {
      brand_id: brand.brand_id,
      name: "ci",
      environment: "live",
      scopes: ["streams:read"],
    });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^svc_live_[0-9A-Za-z]{32}$/);
    const stored = await server.db.query<{ key_hash: string }>("SELECT key_hash FROM api_keys WHERE id = $1", [
      created.body.key_id,
    ]);
    expect(stored[0]!.key_hash).toBe(hashApiKey(created.body.key));
    expect(JSON.stringify(await server.db.query("SELECT * FROM api_keys"))).not.toContain(created.body.key);
    expect((await server.call("GET", "/api/v1/streams", { key: created.body.key })).status).toBe(200);
    expect((await admin("DELETE", `/keys/${created.body.key_id}`)).body).toEqual({
      key_id: created.body.key_id,
      revoked: true,
    });
    expect((await server.call("GET", "/api/v1/streams", { key: created.body.key })).status).toBe(401);
  });

  it("answers 404 for unknown brands and keys, 400 for bad bodies", async () => {
    expect((await admin("GET", "/brands/6f1c2a52-0000-4000-8000-000000000001")).status).toBe(404);
    expect((await admin("DELETE", "/keys/6f1c2a52-0000-4000-8000-000000000001")).status).toBe(404);
    expect(
      (
        await admin("POST", "/keys", {
          brand_id: "6f1c2a52-0000-4000-8000-000000000001",
          name: "x",
          environment: "test",
          scopes: ["streams:read"],
        })
      ).status,
    ).toBe(404);
    const bad = await admin("POST", "/brands", { name: "X", vertical: "casino", plan: "growth" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_fields");
    expect((await admin("POST", "/brands", { vertical: "igaming", plan: "growth" })).body.error.code).toBe(
      "missing_fields",
    );
  });

  it("answers 401 without the operator token and never accepts an API key", async () => {
    const { key } = await server.tenant();
    expect((await server.call("GET", "/admin/v1/brands/6f1c2a52-0000-4000-8000-000000000001")).status).toBe(401);
    expect((await server.call("GET", "/admin/v1/brands/6f1c2a52-0000-4000-8000-000000000001", { key })).status).toBe(
      401,
    );
  });

  it("lists a brand's webhook deliveries", async () => {
    const { brandId, key } = await server.tenant();
    await server.call("POST", "/api/v1/webhooks", {
      key,
      body: { url: "https://hooks.example.com/x", events: ["stream.started"] },
    });
    await server.call("POST", "/api/v1/streams", {
      key,
      body: {
        creator_id: (await server.call("GET", "/api/v1/creators")).body.creators[0].id,
        product_name: "p",
        platform: "kick",
      },
    });
    const response = await admin("GET", `/webhook-deliveries?brand_id=${brandId}`);
    expect(response.status).toBe(200);
    expect(response.body.deliveries).toEqual([
      expect.objectContaining({ event_type: "stream.started", status: "pending", attempt: 0 }),
    ]);
  });
});

describe("operator API: lists, revoking by the key itself, retrying a delivery", () => {
  it("lists every brand", async () => {
    const { body: created } = await admin("POST", "/brands", { name: "Listed", vertical: "igaming", plan: "starter" });
    const listed = await admin("GET", "/brands");
    expect(listed.status).toBe(200);
    expect(listed.body.brands).toContainEqual(created);
  });

  it("lists a brand's keys without key material, revoked ones with revoked_at", async () => {
    const { body: brand } = await admin("POST", "/brands", { name: "Keys", vertical: "live-commerce", plan: "growth" });
    const first = (
      await admin("POST", "/keys", {
        brand_id: brand.brand_id,
        name: "ci",
        environment: "test",
        scopes: ["streams:read"],
      })
    ).body;
    server.clock.advance(1_000);
    const second = (
      await admin("POST", "/keys", {
        brand_id: brand.brand_id,
        name: "prod",
        environment: "live",
        scopes: ["streams:read", "streams:write"],
      })
    ).body;
    await admin("DELETE", `/keys/${second.key_id}`);
    const listed = await admin("GET", `/keys?brand_id=${brand.brand_id}`);
    expect(listed.status).toBe(200);
    expect(listed.body.keys).toEqual([
      {
        key_id: first.key_id,
        brand_id: brand.brand_id,
        name: "ci",
        key_hint: `svc_test_…${first.key.slice(-4)}`,
        environment: "test",
        scopes: ["streams:read"],
        created_at: first.created_at,
        expires_at: null,
        revoked_at: null,
      },
      expect.objectContaining({
        key_id: second.key_id,
        name: "prod",
        environment: "live",
        revoked_at: server.clock().toISOString(),
      }),
    ]);
    expect(listed.text).not.toContain(first.key);
    expect(listed.text).not.toContain(hashApiKey(first.key));
    expect((await admin("GET", "/keys?brand_id=6f1c2a52-0000-4000-8000-000000000001")).status).toBe(404);
    expect((await admin("GET", "/keys")).body.error.code).toBe("missing_fields");
  });

  it("revokes a key given the key itself", async () => {
    const { brandId, key } = await server.tenant();
    expect((await server.call("GET", "/api/v1/streams", { key })).status).toBe(200);
    const revoked = await admin("POST", "/keys/revoke", { key });
    expect(revoked.status).toBe(200);
    const [record] = (await admin("GET", `/keys?brand_id=${brandId}`)).body.keys;
    expect(revoked.body).toEqual({ key_id: record.key_id, revoked: true });
    expect(record.revoked_at).not.toBeNull();
    expect((await server.call("GET", "/api/v1/streams", { key })).status).toBe(401);
    expect((await admin("POST", "/keys/revoke", { key })).status).toBe(200);
    expect((await admin("POST", "/keys/revoke", { key: `svc_test_${"0".repeat(32)}` })).status).toBe(404);
    expect((await admin("POST", "/keys/revoke", { key: "not-a-key" })).body.error.code).toBe("invalid_fields");
  });

  it("sends a failed delivery again: a new series of attempts, the first due now", async () => {
    let outcome: DeliveryOutcome = { ok: false, status: null, error: "refused: url is not https", permanent: true };
    const sent: string[] = [];
    const delivering = await startTestServer({
      delivery: { transport: { send: async ({ url }) => (sent.push(url), outcome) } },
    });
    const call = (method: string, path: string) => delivering.call(method, `/admin/v1${path}`, { key: ADMIN_TOKEN });
    try {
      const { brandId, key } = await delivering.tenant();
      await delivering.call("POST", "/api/v1/webhooks", {
        key,
        body: { url: "https://hooks.example.com/retry", events: ["stream.started"] },
      });
      await delivering.call("POST", "/api/v1/streams", { key, body: streamBody() });
      await delivering.deliver();
      const [failed] = (await call("GET", `/webhook-deliveries?brand_id=${brandId}`)).body.deliveries;
      expect(failed).toMatchObject({ status: "failed", attempt: 1 });

      const retried = await call("POST", `/webhook-deliveries/${failed.delivery_id}/retry`);
      expect(retried.status).toBe(200);
      expect(retried.body).toEqual({
        ...failed,
        status: "pending",
        attempt: 0,
        next_attempt_at: delivering.clock().toISOString(),
      });

      outcome = { ok: true, status: 204 };
      expect(await delivering.deliver()).toBe(1);
      const [succeeded] = (await call("GET", `/webhook-deliveries?brand_id=${brandId}`)).body.deliveries;
      expect(succeeded).toMatchObject({ status: "succeeded", attempt: 1, response_status: 204 });
      expect(sent).toHaveLength(2);

      const again = await call("POST", `/webhook-deliveries/${failed.delivery_id}/retry`);
      expect(again.status).toBe(400);
      expect(again.body.error).toEqual({
        code: "invalid_fields",
        message: "Only a failed delivery can be retried; this one is succeeded.",
      });
      expect((await call("POST", "/webhook-deliveries/6f1c2a52-0000-4000-8000-000000000001/retry")).status).toBe(404);
      expect((await call("POST", "/webhook-deliveries/not-a-uuid/retry")).status).toBe(404);
    } finally {
      await delivering.close();
    }
  });
});

describe("operator API disabled", () => {
  it("answers 404 when ADMIN_TOKEN is not set", async () => {
    const disabled = await startTestServer({ config: { adminToken: undefined } });
    try {
      const response = await disabled.call("GET", "/admin/v1/brands/6f1c2a52-0000-4000-8000-000000000001", {
        key: ADMIN_TOKEN,
      });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe("not_found");
    } finally {
      await disabled.close();
    }
  });
});
