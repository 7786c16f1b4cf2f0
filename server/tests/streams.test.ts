import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CREATOR_ID, startTestServer, streamBody, type TestServer } from "../../testkit/harness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("POST /streams", () => {
  it("with a test key, starts the stream live at once with test: true and no room credentials", async () => {
    const { key } = await server.tenant();
    const response = await server.call("POST", "/api/v1/streams", {
      key,
      body: streamBody({ duration_minutes: undefined }),
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      stream_id: expect.stringMatching(UUID),
      status: "live",
      room_name: expect.any(String),
      ws_url: null,
      viewer_token: null,
      test: true,
      created_at: expect.stringMatching(ISO_MS),
    });
  });

  it("with a live key, answers preparing with agent_dispatched and dispatch_method, never test", async () => {
    const { key } = await server.tenant({ environment: "live" });
    const response = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ status: "preparing", agent_dispatched: true, dispatch_method: "simulated" });
    expect(response.body).not.toHaveProperty("test");
    expect(response.body.ws_url).toMatch(/^wss:\/\//);
  });

  it("defaults vertical to the brand's vertical", async () => {
    const { key } = await server.tenant({ vertical: "igaming" });
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody({ platform: "kick" }) });
    const list = await server.call("GET", "/api/v1/streams", { key });
    expect(list.body.streams.find((s: any) => s.id === created.body.stream_id).vertical).toBe("igaming");
  });

  it.each([
    ["the body is not JSON", { rawBody: "{oops" }],
    ["the body is empty", { rawBody: "" }],
    ["creator_id is absent", { body: streamBody({ creator_id: undefined }) }],
    ["product_name is absent", { body: streamBody({ product_name: undefined }) }],
    ["platform is absent", { body: streamBody({ platform: undefined }) }],
  ])("answers 400 missing_fields when %s", async (_case, options) => {
    const { key } = await server.tenant();
    const response = await server.call("POST", "/api/v1/streams", {
      key,
      ...options,
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("missing_fields");
  });

  it("answers 400 missing_fields when duration_minutes is absent on a live-key start, and creates nothing", async () => {
    const { key } = await server.tenant({ environment: "live" });
    const response = await server.call("POST", "/api/v1/streams", {
      key,
      body: streamBody({ duration_minutes: undefined }),
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual({
      code: "missing_fields",
      message: expect.stringContaining("duration_minutes"),
    });
    expect((await server.call("GET", "/api/v1/streams", { key })).body.total).toBe(0);
  });

  it.each([
    ["creator_id longer than 64", { creator_id: "a".repeat(65) }, "creator_id"],
    ["product_name longer than 200", { product_name: "p".repeat(201) }, "product_name"],
    ["platform not allowed", { platform: "myspace" }, "platform"],
    ["platform longer than 32", { platform: "x".repeat(33) }, "platform"],
    ["script longer than 50,000", { script: "s".repeat(50_001) }, "script"],
    ["duration_minutes 0", { duration_minutes: 0 }, "duration_minutes"],
    ["duration_minutes 481", { duration_minutes: 481 }, "duration_minutes"],
    ["duration_minutes 1.5", { duration_minutes: 1.5 }, "duration_minutes"],
    ["duration_minutes as a string", { duration_minutes: "30" }, "duration_minutes"],
    ["vertical unknown", { vertical: "sports" }, "vertical"],
    ["an unknown field", { colour: "red" }, "colour"],
  ])("answers 400 invalid_fields naming the field when %s", async (_case, overrides, field) => {
    const { key } = await server.tenant();
    const response = await server.call("POST", "/api/v1/streams", { key, body: streamBody(overrides) });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("invalid_fields");
    expect(response.body.error.message).toContain(field);
  });

  it("accepts the limits themselves: duration 1 and 480, script of 50,000, product_name of 200", async () => {
    const { key } = await server.tenant({ max_active_streams: 10 });
    for (const overrides of [
      { duration_minutes: 1 },
      { duration_minutes: 480 },
      { script: "s".repeat(50_000) },
      { product_name: "p".repeat(200) },
    ]) {
      expect((await server.call("POST", "/api/v1/streams", { key, body: streamBody(overrides) })).status).toBe(201);
    }
  });

  it("answers 400 invalid_creator for an id that is not listed, and for a derived slug", async () => {
    const { key } = await server.tenant();
    for (const creator_id of ["avt_doesnotexist", "alicia-jerde"]) {
      const response = await server.call("POST", "/api/v1/streams", { key, body: streamBody({ creator_id }) });
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe("invalid_creator");
    }
  });

  it("answers 403 vertical_mismatch when the vertical differs from the brand's", async () => {
    const { key } = await server.tenant({ vertical: "live-commerce" });
    const response = await server.call("POST", "/api/v1/streams", { key, body: streamBody({ vertical: "igaming" }) });
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe("vertical_mismatch");
  });

  it.each(["tiktok", "facebook", "instagram"])(
    "answers 403 vertical_mismatch when an igaming brand streams to %s",
    async (platform) => {
      const { key } = await server.tenant({ vertical: "igaming" });
      const response = await server.call("POST", "/api/v1/streams", { key, body: streamBody({ platform }) });
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe("vertical_mismatch");
    },
  );

  it("reports vertical_mismatch before invalid_creator", async () => {
    const { key } = await server.tenant({ vertical: "igaming" });
    const response = await server.call("POST", "/api/v1/streams", {
      key,
      body: streamBody({ platform: "tiktok", creator_id: "avt_doesnotexist" }),
    });
    expect(response.body.error.code).toBe("vertical_mismatch");
  });

  it("answers 429 concurrency_limit for a fourth active stream, and again on retry", async () => {
    const { key } = await server.tenant();
    for (let i = 0; i < 3; i++)
      expect((await server.call("POST", "/api/v1/streams", { key, body: streamBody() })).status).toBe(201);
    for (let i = 0; i < 2; i++) {
      const response = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
      expect(response.status).toBe(429);
      expect(response.body.error.code).toBe("concurrency_limit");
    }
  });

  it("counts the concurrency limit per mode: test streams do not block live ones", async () => {
    const { brandId, key } = await server.tenant();
    for (let i = 0; i < 3; i++) await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    const live = await server.key(brandId, { environment: "live" });
    expect((await server.call("POST", "/api/v1/streams", { key: live.key, body: streamBody() })).status).toBe(201);
  });

  it("answers 502 launch_failed for sim:launch-failed and keeps the stream readable in error", async () => {
    for (const environment of ["test", "live"] as const) {
      const { key } = await server.tenant({ environment });
      const response = await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody({ product_name: "Crash sim:launch-failed" }),
      });
      expect(response.status).toBe(502);
      expect(response.body.error.code).toBe("launch_failed");
      const [stream] = (await server.call("GET", "/api/v1/streams", { key })).body.streams;
      expect(stream.status).toBe("error");
      expect(stream.ended_at).toMatch(ISO_MS);
      expect((await server.call("GET", `/api/v1/streams/${stream.id}`, { key })).body.status).toBe("error");
    }
  });
});

describe("GET /streams", () => {
  it("lists the brand's streams newest first with total, limit and offset", async () => {
    const { key } = await server.tenant({ max_active_streams: 10 });
    const ids = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await server.call("POST", "/api/v1/streams", { key, body: streamBody() })).body.stream_id);
      server.clock.advance(1000);
    }
    const response = await server.call("GET", "/api/v1/streams?limit=2&offset=1", { key });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ total: 5, limit: 2, offset: 1 });
    expect(response.body.streams.map((s: any) => s.id)).toEqual([ids[3], ids[2]]);
    expect(response.body.streams[0]).toMatchObject({
      creator_id: CREATOR_ID,
      source: "api",
      status: "live",
      platform: "youtube",
    });
  });

  it("pages without duplicates or gaps", async () => {
    const { key } = await server.tenant({ max_active_streams: 20 });
    for (let i = 0; i < 7; i++) await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    const seen: string[] = [];
    for (let offset = 0; offset < 7; offset += 3) {
      seen.push(
        ...(await server.call("GET", `/api/v1/streams?limit=3&offset=${offset}`, { key })).body.streams.map(
          (s: any) => s.id,
        ),
      );
    }
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);
  });

  it("reports the total past the last page, and per status filter", async () => {
    const { key } = await server.tenant({ max_active_streams: 10 });
    const created = [];
    for (let i = 0; i < 3; i++)
      created.push((await server.call("POST", "/api/v1/streams", { key, body: streamBody() })).body.stream_id);
    await server.call("DELETE", `/api/v1/streams/${created[0]}`, { key });
    expect((await server.call("GET", "/api/v1/streams?offset=50", { key })).body).toMatchObject({
      streams: [],
      total: 3,
      offset: 50,
    });
    expect((await server.call("GET", "/api/v1/streams?status=live&offset=50", { key })).body).toMatchObject({
      streams: [],
      total: 2,
    });
    const ended = (await server.call("GET", "/api/v1/streams?status=ended", { key })).body;
    expect(ended.total).toBe(1);
    expect(ended.streams.map((s: any) => s.id)).toEqual([created[0]]);
  });

  it.each([
    ["limit=1000", 100, 0],
    ["limit=0", 1, 0],
    ["limit=-5", 1, 0],
    ["limit=abc", 20, 0],
    ["offset=-3", 20, 0],
    ["offset=xyz", 20, 0],
    ["limit=2.5&offset=1.5", 20, 0],
    ["limit=5&limit=7", 5, 0],
    // Already canonical (left as sent): absent parameters take the defaults.
    ["limit=7", 7, 0],
    ["offset=3", 20, 3],
    ["limit=100&offset=2&status=%28", 100, 2],
    ["", 20, 0],
  ])("never answers 400: %s is clamped to limit %i, offset %i", async (query, limit, offset) => {
    const { key } = await server.tenant();
    const response = await server.call("GET", `/api/v1/streams?${query}`, { key });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ limit, offset });
  });

  it("filters by status, and an unrecognised status matches nothing", async () => {
    const { key } = await server.tenant();
    await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    expect((await server.call("GET", "/api/v1/streams?status=live", { key })).body.total).toBe(1);
    expect((await server.call("GET", "/api/v1/streams?status=ended", { key })).body.total).toBe(0);
    const unknown = await server.call("GET", "/api/v1/streams?status=bogus", { key });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({ streams: [], total: 0 });
  });

  it("keeps test and live data apart, and brands apart", async () => {
    const { brandId, key } = await server.tenant();
    await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    const live = await server.key(brandId, { environment: "live" });
    expect((await server.call("GET", "/api/v1/streams", { key: live.key })).body.total).toBe(0);
    const other = await server.tenant();
    expect((await server.call("GET", "/api/v1/streams", { key: other.key })).body.total).toBe(0);
  });
});

describe("GET /streams/{id}", () => {
  it("answers the stream detail with every field and an empty events array", async () => {
    const { key } = await server.tenant();
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    const response = await server.call("GET", `/api/v1/streams/${created.body.stream_id}`, { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      stream_id: created.body.stream_id,
      status: "live",
      creator_id: CREATOR_ID,
      product_name: "Summer sneakers drop",
      platform: "youtube",
      vertical: "live-commerce",
      viewer_count: expect.any(Number),
      started_at: created.body.created_at,
      ended_at: null,
      room_name: created.body.room_name,
      events: [],
    });
  });

  it("answers 404 not_found for an unknown id, a non-UUID id, another brand's stream and the other mode's stream", async () => {
    const { brandId, key } = await server.tenant();
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    const other = await server.tenant();
    const live = await server.key(brandId, { environment: "live" });
    const cases = [
      await server.call("GET", "/api/v1/streams/6f1c2a52-0000-4000-8000-000000000099", { key }),
      await server.call("GET", "/api/v1/streams/not-a-uuid", { key }),
      await server.call("GET", `/api/v1/streams/${created.body.stream_id}`, { key: other.key }),
      await server.call("GET", `/api/v1/streams/${created.body.stream_id}`, { key: live.key }),
    ];
    for (const response of cases) {
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe("not_found");
    }
  });
});

describe("DELETE /streams/{id}", () => {
  it("ends a live stream and answers stream_id, status ended and ended_at", async () => {
    const { key } = await server.tenant();
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    server.clock.advance(90_000);
    const response = await server.call("DELETE", `/api/v1/streams/${created.body.stream_id}`, { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      stream_id: created.body.stream_id,
      status: "ended",
      ended_at: server.clock().toISOString(),
    });
  });

  it("answers 404 when ending twice, and for a stream of another brand", async () => {
    const { key } = await server.tenant();
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    const other = await server.tenant();
    expect((await server.call("DELETE", `/api/v1/streams/${created.body.stream_id}`, { key: other.key })).status).toBe(
      404,
    );
    expect((await server.call("DELETE", `/api/v1/streams/${created.body.stream_id}`, { key })).status).toBe(200);
    const twice = await server.call("DELETE", `/api/v1/streams/${created.body.stream_id}`, { key });
    expect(twice.status).toBe(404);
    expect(twice.body.error.code).toBe("not_found");
  });

  it("answers 404 for a stream still preparing", async () => {
    const { key } = await server.tenant({ environment: "live" });
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    expect(created.body.status).toBe("preparing");
    expect((await server.call("DELETE", `/api/v1/streams/${created.body.stream_id}`, { key })).status).toBe(404);
  });

  it("frees a concurrency slot", async () => {
    const { key } = await server.tenant();
    const ids = [];
    for (let i = 0; i < 3; i++)
      ids.push((await server.call("POST", "/api/v1/streams", { key, body: streamBody() })).body.stream_id);
    await server.call("DELETE", `/api/v1/streams/${ids[0]}`, { key });
    expect((await server.call("POST", "/api/v1/streams", { key, body: streamBody() })).status).toBe(201);
  });
});
