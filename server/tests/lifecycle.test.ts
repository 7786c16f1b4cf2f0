import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, startTestServer, streamBody, type TestServer } from "../../testkit/harness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const brandOf = async (brandId: string) =>
  (await server.call("GET", `/admin/v1/brands/${brandId}`, { key: ADMIN_TOKEN })).body;
const streamOf = async (key: string, id: string) => (await server.call("GET", `/api/v1/streams/${id}`, { key })).body;

describe("live-key lifecycle and billing (growth: 30 cents a minute)", () => {
  it("preparing → live when the agent joins → ended by DELETE, billing only the minutes live", async () => {
    const { brandId, key } = await server.tenant({ environment: "live", credits_cents: 10_000 });
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody({ duration_minutes: 30 }) });
    expect(created.body.status).toBe("preparing");
    // The 30-minute hold (900 cents) is taken at start; nothing is charged yet.
    expect(await brandOf(brandId)).toMatchObject({ credits_cents: 10_000, credits_held_cents: 900, minutes_used: 0 });

    server.clock.advance(2_000);
    await server.sweep();
    expect((await streamOf(key, created.body.stream_id)).status).toBe("preparing");

    server.clock.advance(1_000); // the simulated agent joins 3 s after launch
    await server.sweep();
    const live = await streamOf(key, created.body.stream_id);
    expect(live.status).toBe("live");
    const startedAt = new Date(live.started_at).getTime();
    expect(startedAt).toBe(new Date(created.body.created_at).getTime() + 3_000);

    server.clock.advance(2 * 60_000 + 5_000); // 2 min 5 s live → 3 billed minutes
    const ended = await server.call("DELETE", `/api/v1/streams/${created.body.stream_id}`, { key });
    expect(ended.status).toBe(200);
    expect(await brandOf(brandId)).toMatchObject({
      credits_cents: 10_000 - 90,
      credits_held_cents: 0,
      minutes_used: 3,
    });
    const detail = await streamOf(key, created.body.stream_id);
    expect(detail).toMatchObject({ status: "ended", ended_at: ended.body.ended_at });
  });

  it("preparing → live → ended by itself after duration_minutes, billing exactly the duration", async () => {
    const { brandId, key } = await server.tenant({ environment: "live", credits_cents: 10_000 });
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody({ duration_minutes: 10 }) });
    server.clock.advance(3_000);
    await server.sweep();
    server.clock.advance(10 * 60_000);
    await server.sweep();
    const detail = await streamOf(key, created.body.stream_id);
    expect(detail.status).toBe("ended");
    expect(new Date(detail.ended_at).getTime() - new Date(detail.started_at).getTime()).toBe(10 * 60_000);
    expect(await brandOf(brandId)).toMatchObject({
      credits_cents: 10_000 - 300,
      credits_held_cents: 0,
      minutes_used: 10,
    });
  });

  it("catches up on read even if no sweep ran: a stream past its duration shows ended and cannot be ended again", async () => {
    const { key } = await server.tenant({ environment: "live" });
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody({ duration_minutes: 1 }) });
    server.clock.advance(5 * 60_000);
    expect((await streamOf(key, created.body.stream_id)).status).toBe("ended");
    expect((await server.call("DELETE", `/api/v1/streams/${created.body.stream_id}`, { key })).status).toBe(404);
  });

  it("preparing → error after the time-out when the agent never joins, with nothing billed and the hold released", async () => {
    const { brandId, key } = await server.tenant({ environment: "live", credits_cents: 10_000 });
    const created = await server.call("POST", "/api/v1/streams", {
      key,
      body: streamBody({ product_name: "Quiet sim:never-joins", duration_minutes: 20 }),
    });
    expect(await brandOf(brandId)).toMatchObject({ credits_held_cents: 600 });
    server.clock.advance(299_000);
    await server.sweep();
    expect((await streamOf(key, created.body.stream_id)).status).toBe("preparing");
    server.clock.advance(1_000);
    await server.sweep();
    const detail = await streamOf(key, created.body.stream_id);
    expect(detail).toMatchObject({ status: "error", started_at: null });
    expect(detail.ended_at).not.toBeNull();
    expect(await brandOf(brandId)).toMatchObject({ credits_cents: 10_000, credits_held_cents: 0, minutes_used: 0 });
  });

  it("live → error for sim:fails-live, billing the minutes it was live", async () => {
    const { brandId, key } = await server.tenant({ environment: "live", credits_cents: 10_000 });
    const created = await server.call("POST", "/api/v1/streams", {
      key,
      body: streamBody({ product_name: "Shaky sim:fails-live" }),
    });
    server.clock.advance(3_000);
    await server.sweep();
    expect((await streamOf(key, created.body.stream_id)).status).toBe("live");
    server.clock.advance(3_000);
    await server.sweep();
    expect((await streamOf(key, created.body.stream_id)).status).toBe("error");
    expect(await brandOf(brandId)).toMatchObject({
      credits_cents: 10_000 - 30,
      credits_held_cents: 0,
      minutes_used: 1,
    });
  });

  it("answers 402 insufficient_credits when available credits (balance minus holds) cannot cover the hold", async () => {
    const { key } = await server.tenant({ environment: "live", credits_cents: 1_000 });
    expect(
      (await server.call("POST", "/api/v1/streams", { key, body: streamBody({ duration_minutes: 30 }) })).status,
    ).toBe(201);
    const response = await server.call("POST", "/api/v1/streams", { key, body: streamBody({ duration_minutes: 4 }) });
    expect(response.status).toBe(402);
    expect(response.body.error.code).toBe("insufficient_credits");
  });

  it("answers 402 no_minutes when the plan's minutes are used, before checking credits", async () => {
    const { brandId, key } = await server.tenant({ environment: "live", credits_cents: 0, plan_minutes: 5 });
    await server.call("PATCH", `/admin/v1/brands/${brandId}`, { key: ADMIN_TOKEN, body: { plan_minutes: 0 } });
    const response = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    expect(response.status).toBe(402);
    expect(response.body.error.code).toBe("no_minutes");
  });

  it("bills enterprise brands 20 cents a minute", async () => {
    const { brandId, key } = await server.tenant({ environment: "live", plan: "enterprise", credits_cents: 10_000 });
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody({ duration_minutes: 5 }) });
    expect(await brandOf(brandId)).toMatchObject({ credits_held_cents: 100 });
    server.clock.advance(3_000 + 60_000);
    await server.call("DELETE", `/api/v1/streams/${created.body.stream_id}`, { key });
    expect(await brandOf(brandId)).toMatchObject({
      credits_cents: 10_000 - 20,
      credits_held_cents: 0,
      minutes_used: 1,
    });
  });
});

describe("test-key lifecycle", () => {
  it("never bills and never touches the wallet", async () => {
    const { brandId, key } = await server.tenant({ environment: "test", credits_cents: 0, plan_minutes: 0 });
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    server.clock.advance(10 * 60_000);
    await server.call("DELETE", `/api/v1/streams/${created.body.stream_id}`, { key });
    expect(await brandOf(brandId)).toMatchObject({ credits_cents: 0, credits_held_cents: 0, minutes_used: 0 });
  });

  it("ends a test stream without a duration after 480 minutes", async () => {
    const { key } = await server.tenant();
    const created = await server.call("POST", "/api/v1/streams", {
      key,
      body: streamBody({ duration_minutes: undefined }),
    });
    server.clock.advance(479 * 60_000);
    await server.sweep();
    expect((await streamOf(key, created.body.stream_id)).status).toBe("live");
    server.clock.advance(60_000);
    await server.sweep();
    expect((await streamOf(key, created.body.stream_id)).status).toBe("ended");
  });
});
