import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../testkit/harness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const hook = (overrides: Record<string, unknown> = {}) => ({
  url: "https://hooks.example.com/live",
  events: ["stream.started", "stream.ended"],
  ...overrides,
});

describe("POST /webhooks", () => {
  it("registers a webhook and returns its whsec_ secret once", async () => {
    const { key } = await server.tenant();
    const response = await server.call("POST", "/api/v1/webhooks", { key, body: hook() });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      webhook_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: "https://hooks.example.com/live",
      events: ["stream.started", "stream.ended"],
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      active: true,
    });
    const list = await server.call("GET", "/api/v1/webhooks", { key });
    expect(list.body.webhooks).toEqual([
      {
        webhook_id: response.body.webhook_id,
        url: "https://hooks.example.com/live",
        events: ["stream.started", "stream.ended"],
        active: true,
        created_at: expect.any(String),
      },
    ]);
    expect(list.text).not.toContain("whsec_");
  });

  it.each([
    ["invalid JSON", { rawBody: "{" }],
    ["url absent", { body: { events: ["stream.started"] } }],
    ["events absent", { body: { url: "https://hooks.example.com/x" } }],
  ])("answers 400 missing_fields for %s", async (_case, options) => {
    const { key } = await server.tenant();
    const response = await server.call("POST", "/api/v1/webhooks", {
      key,
      ...options,
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("missing_fields");
  });

  // Accepted by 1.3.0 (Ajv's fast `uri`), refused by a strict RFC 3986 check: they must still
  // register, and list (a 500 on GET /webhooks would lock a brand out of its own webhooks).
  it.each([
    "https://hooks.example.com/a|b",
    "https://hooks.example.com/ü",
    "https://hooks.example.com/a{b}",
    "https://hooks.example.com/%zz",
  ])("registers and lists %s, as 1.3.0 did", async (url) => {
    const { key } = await server.tenant();
    const created = await server.call("POST", "/api/v1/webhooks", { key, body: hook({ url }) });
    expect(created.status).toBe(201);
    expect(created.body.url).toBe(url);
    const list = await server.call("GET", "/api/v1/webhooks", { key });
    expect(list.status).toBe(200);
    expect(list.body.webhooks.map((webhook: { url: string }) => webhook.url)).toEqual([url]);
  });

  it.each([
    "http://hooks.example.com/x",
    "https://localhost/x",
    "https://10.0.0.1/x",
    "https://[::1]/x",
    "https://2130706433/",
    "not a url",
    "https://user:pw@hooks.example.com/",
    // Host names DNS cannot carry, which URL parsing accepts.
    "https://a..b/",
    "https://-bad-.example/",
    "https://x_y.example/",
  ])("answers 400 invalid_url for %s", async (url) => {
    const { key } = await server.tenant();
    const response = await server.call("POST", "/api/v1/webhooks", { key, body: hook({ url }) });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("invalid_url");
  });

  it.each([[[]], [["stream.paused"]], [["stream.started", "nope"]]])(
    "answers 400 invalid_events for %j",
    async (events) => {
      const { key } = await server.tenant();
      const response = await server.call("POST", "/api/v1/webhooks", { key, body: hook({ events }) });
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe("invalid_events");
    },
  );
});

describe("DELETE /webhooks", () => {
  it("deletes, and is idempotent: unknown, malformed and other brands' ids also answer 200 deleted: true", async () => {
    const { key } = await server.tenant();
    const other = await server.tenant();
    const created = await server.call("POST", "/api/v1/webhooks", { key, body: hook() });
    const foreign = await server.call("POST", "/api/v1/webhooks", { key: other.key, body: hook() });
    for (const id of [
      created.body.webhook_id,
      created.body.webhook_id,
      "6f1c2a52-0000-4000-8000-000000000077",
      "garbage",
      foreign.body.webhook_id,
    ]) {
      const response = await server.call("DELETE", `/api/v1/webhooks?id=${id}`, { key });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ webhook_id: id, deleted: true });
    }
    expect((await server.call("GET", "/api/v1/webhooks", { key })).body.webhooks).toEqual([]);
    // Another brand's webhook is untouched.
    expect((await server.call("GET", "/api/v1/webhooks", { key: other.key })).body.webhooks).toHaveLength(1);
  });

  it("answers 400 missing_fields without an id", async () => {
    const { key } = await server.tenant();
    const response = await server.call("DELETE", "/api/v1/webhooks", { key });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("missing_fields");
  });

  it("keeps test-mode and live-mode webhooks apart", async () => {
    const { brandId, key } = await server.tenant();
    await server.call("POST", "/api/v1/webhooks", { key, body: hook() });
    const live = await server.key(brandId, { environment: "live" });
    expect((await server.call("GET", "/api/v1/webhooks", { key: live.key })).body.webhooks).toEqual([]);
  });
});

describe("the cap of 16 webhooks per brand and mode", () => {
  const register = (key: string, path: string, headers: Record<string, string> = {}) =>
    server.call("POST", "/api/v1/webhooks", { key, body: hook({ url: `https://hooks.example.com/${path}` }), headers });

  it("refuses a 17th webhook with 429 webhook_limit until one is deleted; the other mode has 16 of its own", async () => {
    const { brandId, key } = await server.tenant();
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) {
      const created = await register(key, `cap-${i}`);
      expect(created.status).toBe(201);
      ids.push(created.body.webhook_id);
    }
    const refused = await register(key, "cap-16");
    expect([refused.status, refused.body.error.code]).toEqual([429, "webhook_limit"]);
    expect(refused.body.error.message).toContain("16 webhooks in test mode");
    expect(refused.headers.get("retry-after")).toBeNull();
    expect((await server.call("GET", "/api/v1/webhooks", { key })).body.webhooks).toHaveLength(16);

    const { key: liveKey } = await server.key(brandId, { environment: "live" });
    expect((await register(liveKey, "live-0")).status).toBe(201);

    expect((await server.call("DELETE", `/api/v1/webhooks?id=${ids[0]}`, { key })).status).toBe(200);
    expect((await register(key, "cap-16")).status).toBe(201);
    expect((await register(key, "cap-17")).status).toBe(429);
  });

  it("holds under parallel registrations: of 30 at once, exactly 16 are registered", async () => {
    const { key } = await server.tenant();
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => register(key, `race-${i}`)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(16);
    expect(answers.filter((answer) => answer.status !== 201).map((answer) => answer.body.error.code)).toEqual(
      Array(14).fill("webhook_limit"),
    );
    expect((await server.call("GET", "/api/v1/webhooks", { key })).body.webhooks).toHaveLength(16);
  });

  it("keeps the refusal for its Idempotency-Key: the same request replays 429, a new key registers once a place is free", async () => {
    const { key } = await server.tenant();
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) ids.push((await register(key, `idem-${i}`)).body.webhook_id);
    const first = await register(key, "idem-16", { "idempotency-key": "cap-refused" });
    expect([first.status, first.body.error.code]).toEqual([429, "webhook_limit"]);
    expect((await server.call("DELETE", `/api/v1/webhooks?id=${ids[0]}`, { key })).status).toBe(200);
    const replayed = await register(key, "idem-16", { "idempotency-key": "cap-refused" });
    expect([replayed.status, replayed.headers.get("idempotent-replayed")]).toEqual([429, "true"]);
    expect((await register(key, "idem-16", { "idempotency-key": "cap-fresh" })).status).toBe(201);
  });
});
