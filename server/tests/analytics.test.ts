import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, streamBody, type TestServer } from "../../testkit/harness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("GET /analytics", () => {
  it("aggregates the brand's streams of the period: totals, minutes of completed streams, live_now and by_platform", async () => {
    const { brandId, key } = await server.tenant({ max_active_streams: 10 });
    const a = (await server.call("POST", "/api/v1/streams", { key, body: streamBody({ platform: "youtube" }) })).body
      .stream_id;
    await server.call("POST", "/api/v1/streams", { key, body: streamBody({ platform: "twitch" }) });
    await server.call("POST", "/api/v1/streams", { key, body: streamBody({ platform: "youtube" }) });
    server.clock.advance(125_000);
    await server.call("DELETE", `/api/v1/streams/${a}`, { key });

    const response = await server.call("GET", "/api/v1/analytics", { key });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      period: "7d",
      brand_id: brandId,
      total_streams: 3,
      total_minutes: 3,
      live_now: 2,
      by_platform: { youtube: 2, twitch: 1 },
    });
    const viewers = response.body.streams.reduce((sum: number, s: { viewer_count: number }) => sum + s.viewer_count, 0);
    expect(response.body.total_viewers).toBe(viewers);
    expect(response.body.avg_viewers_per_stream).toBeCloseTo(viewers / 3, 2);
    expect(response.body.streams).toHaveLength(3);
  });

  it("restricts to one stream with stream_id, and to the period", async () => {
    const { key } = await server.tenant();
    const old = (await server.call("POST", "/api/v1/streams", { key, body: streamBody() })).body.stream_id;
    await server.call("DELETE", `/api/v1/streams/${old}`, { key });
    server.clock.advance(2 * 86_400_000);
    const recent = (await server.call("POST", "/api/v1/streams", { key, body: streamBody() })).body.stream_id;
    expect((await server.call("GET", "/api/v1/analytics?period=24h", { key })).body.total_streams).toBe(1);
    expect((await server.call("GET", "/api/v1/analytics?period=7d", { key })).body.total_streams).toBe(2);
    const one = await server.call("GET", `/api/v1/analytics?stream_id=${recent}`, { key });
    expect(one.body.streams.map((s: { id: string }) => s.id)).toEqual([recent]);
  });

  it("answers zeros, not a division by zero, with no streams", async () => {
    const { key } = await server.tenant();
    const response = await server.call("GET", "/api/v1/analytics?period=30d", { key });
    expect(response.body).toMatchObject({
      total_streams: 0,
      total_viewers: 0,
      avg_viewers_per_stream: 0,
      by_platform: {},
      streams: [],
    });
  });

  it.each(["period=1y", "period=", "stream_id=not-a-uuid"])("answers 400 invalid_fields for %s", async (query) => {
    const { key } = await server.tenant();
    const response = await server.call("GET", `/api/v1/analytics?${query}`, { key });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("invalid_fields");
  });
});
