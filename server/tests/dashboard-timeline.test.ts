// A stream's timeline over the dashboard's API, on both engines: its status changes, its webhook
// events with their deliveries, its duration, and its hold and charge as the wallet moved.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { member } from "../../testkit/dashboard-browser.ts";
import { availableEngines, manualClock, startTestServer, streamBody, type TestServer } from "../../testkit/harness.ts";

type Member = Awaited<ReturnType<typeof member>>;

describe.each(availableEngines())("a stream's timeline on %s", (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    const transport = { send: async () => ({ ok: true as const, status: 204, body: "" }) };
    server = await startTestServer({
      engine,
      clock: manualClock(),
      config: { webhookAllowHosts: ["127.0.0.1"] },
      delivery: { transport },
    });
  });
  afterAll(() => server.close());

  async function brandWithWebhook(mode: "live" | "test") {
    const brand = await server.brand({ plan: "growth", credits_cents: 100_000 });
    const owner = await member(server, brand.id, `owner-${brand.id}@example.com`);
    const { key } = await server.key(brand.id, { environment: mode });
    const hook = await server.call("POST", "/api/v1/webhooks", {
      key,
      body: { url: "http://127.0.0.1:9/hooks", events: ["stream.started", "stream.ended", "stream.error"] },
    });
    expect(hook.status).toBe(201);
    return { brand, owner, key, webhookId: hook.body.webhook_id as string };
  }

  const timelineOf = async (owner: Member, mode: string, id: string) => {
    const answer = await owner.send("GET", `/modes/${mode}/streams/${id}/timeline`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body;
  };

  /** The entries as one line each, seconds after `start`. */
  const lines = (
    timeline: {
      entries: Array<{
        kind: string;
        at: string;
        status?: string;
        event_type?: string;
        action?: string;
        amount_cents?: number;
        minutes?: number | null;
      }>;
    },
    start: number,
  ) =>
    timeline.entries.map((entry) => {
      const seconds = (Date.parse(entry.at) - start) / 1000;
      if (entry.kind === "status") return `${seconds} status ${entry.status}`;
      if (entry.kind === "event") return `${seconds} event ${entry.event_type}`;
      return `${seconds} ${entry.action} ${entry.amount_cents}${entry.minutes === null ? "" : ` for ${entry.minutes} min`}`;
    });

  it("tells a live stream's life with its hold, its charge and the deliveries of its events", async () => {
    const { owner, webhookId } = await brandWithWebhook("live");
    const before = (await owner.send("GET", "/modes/live/overview")).body;
    const created = await owner.send("POST", "/modes/live/streams", streamBody({ duration_minutes: 60 }));
    expect([created.status, created.body.status]).toEqual([201, "preparing"]);
    const id = created.body.stream_id;
    const start = server.clock().getTime();
    let timeline = await timelineOf(owner, "live", id);
    expect(lines(timeline, start)).toEqual(["0 status preparing", "0 hold 1800 for 60 min"]);
    expect(timeline).toMatchObject({
      stream_id: id,
      mode: "live",
      status: "preparing",
      duration_seconds: null,
      billing: { billed: true, price_per_minute_cents: 30, hold_cents: 1800, billed_minutes: null, settled: false },
      deliveries: [],
      deliveries_total: 0,
    });

    // The host joins (SIM_AGENT_JOIN_MS): the read applies the transition, as GET /streams/{id} does.
    server.clock.advance(3_000);
    timeline = await timelineOf(owner, "live", id);
    expect(lines(timeline, start).slice(2)).toEqual(["3 status live", "3 event stream.started"]);
    const startedId = timeline.entries[3].event_id;
    expect(timeline.deliveries).toEqual([
      expect.objectContaining({ event_id: startedId, webhook_id: webhookId, status: "pending", attempts: 0 }),
    ]);
    await server.deliver();
    // 5 min 1 s live: ending now would bill 6 minutes.
    server.clock.advance(301_000);
    timeline = await timelineOf(owner, "live", id);
    expect(timeline.deliveries).toEqual([
      expect.objectContaining({
        event_id: startedId,
        url: "http://127.0.0.1:9/hooks",
        webhook_deleted: false,
        status: "succeeded",
        attempts: 1,
        response_status: 204,
        error: null,
      }),
    ]);
    expect(timeline.duration_seconds).toBe(301);
    expect(timeline.billing).toMatchObject({ billed_minutes: 6, charged_cents: 180, settled: false });

    expect((await owner.send("DELETE", `/modes/live/streams/${id}`)).status).toBe(200);
    await server.deliver();
    timeline = await timelineOf(owner, "live", id);
    expect(lines(timeline, start)).toEqual([
      "0 status preparing",
      "0 hold 1800 for 60 min",
      "3 status live",
      "3 event stream.started",
      "304 status ended",
      "304 charge 180 for 6 min",
      "304 release 1800",
      "304 event stream.ended",
    ]);
    expect(timeline.billing).toEqual({
      billed: true,
      price_per_minute_cents: 30,
      hold_cents: 1800,
      billed_minutes: 6,
      charged_cents: 180,
      settled: true,
    });
    expect(timeline.deliveries.map((one: { status: string }) => one.status)).toEqual(["succeeded", "succeeded"]);
    expect(timeline.deliveries_total).toBe(2);
    // What the wallet shows: the charge taken, nothing held any more, the minutes counted.
    const after = (await owner.send("GET", "/modes/live/overview")).body;
    expect(before.credits_cents - after.credits_cents).toBe(timeline.billing.charged_cents);
    expect([after.credits_held_cents, after.minutes_used - before.minutes_used]).toEqual([0, 6]);
  });

  it("releases the hold untouched of a live stream that never went live", async () => {
    const { owner } = await brandWithWebhook("live");
    const created = await owner.send(
      "POST",
      "/modes/live/streams",
      streamBody({ duration_minutes: 10, product_name: "sim:never-joins" }),
    );
    const start = server.clock().getTime();
    server.clock.advance(300_000);
    const timeline = await timelineOf(owner, "live", created.body.stream_id);
    expect(lines(timeline, start)).toEqual([
      "0 status preparing",
      "0 hold 300 for 10 min",
      "300 status error",
      "300 release 300",
      "300 event stream.error",
    ]);
    expect(timeline).toMatchObject({
      duration_seconds: null,
      billing: { billed_minutes: null, charged_cents: null, settled: true },
    });
  });

  it("shows a test stream live at once and never billed, and a deleted webhook's deliveries as such", async () => {
    const { owner, key, webhookId } = await brandWithWebhook("test");
    const created = await owner.send("POST", "/modes/test/streams", streamBody());
    const id = created.body.stream_id;
    const start = server.clock().getTime();
    server.clock.advance(61_000);
    expect((await server.call("DELETE", `/api/v1/webhooks?id=${webhookId}`, { key })).status).toBe(200);
    expect((await owner.send("DELETE", `/modes/test/streams/${id}`)).status).toBe(200);
    const timeline = await timelineOf(owner, "test", id);
    expect(lines(timeline, start)).toEqual([
      "0 status live",
      "0 event stream.started",
      "61 status ended",
      "61 event stream.ended",
    ]);
    expect(timeline.billing).toEqual({
      billed: false,
      price_per_minute_cents: 0,
      hold_cents: 0,
      billed_minutes: null,
      charged_cents: null,
      settled: false,
    });
    expect(timeline.duration_seconds).toBe(61);
    // The webhook was deleted after the first event: that delivery is listed, marked so.
    expect(timeline.deliveries).toEqual([expect.objectContaining({ webhook_id: webhookId, webhook_deleted: true })]);
  });

  it("cuts a failure reason of any length to the contract's 1,000 characters, on the timeline and the delivery log", async () => {
    const { owner, webhookId } = await brandWithWebhook("test");
    const id = (await owner.send("POST", "/modes/test/streams", streamBody())).body.stream_id;
    await server.deliver();
    // A reason quoting a host name of 1,500 characters, as a failed DNS look-up writes it.
    const reason = `${"h".repeat(1_500)}.example did not resolve`;
    await server.db.query("UPDATE webhook_deliveries SET status = 'failed', error = $1 WHERE webhook_id = $2", [
      reason,
      webhookId,
    ]);
    const [delivery] = (await timelineOf(owner, "test", id)).deliveries;
    expect(delivery.error).toBe(reason.slice(0, 999) + "…");
    const log = await owner.send("GET", `/modes/test/webhooks/${webhookId}/deliveries`);
    expect(log.status, JSON.stringify(log.body)).toBe(200);
    expect(log.body.deliveries[0].error).toHaveLength(1_000);
  });

  it("answers 404 for a stream of another brand or mode, or an id that names none", async () => {
    const { owner } = await brandWithWebhook("test");
    const other = await brandWithWebhook("test");
    const theirs = (await other.owner.send("POST", "/modes/test/streams", streamBody())).body.stream_id;
    const mine = (await owner.send("POST", "/modes/test/streams", streamBody())).body.stream_id;
    for (const [mode, id] of [
      ["test", theirs],
      ["live", mine],
      ["test", randomUUID()],
      ["test", "not-a-stream"],
      ["test", `${mine}0`],
      ["test", "%ZZ"],
    ]) {
      const answer = await owner.send("GET", `/modes/${mode}/streams/${id}/timeline`);
      expect([answer.status, answer.body.error?.code], `${mode} ${id}`).toEqual([404, "not_found"]);
    }
    const badMode = await owner.send("GET", `/modes/sandbox/streams/${mine}/timeline`);
    expect(badMode.status).toBeLessThan(500);
    expect(typeof badMode.body.error.message).toBe("string");
    // Every role reads it; nobody signed out does.
    const viewer = await member(server, (await server.brand()).id, `viewer-${randomUUID()}@example.com`, "viewer");
    expect((await viewer.send("GET", `/modes/test/streams/${mine}/timeline`)).status).toBe(404);
    expect((await server.call("GET", `/dashboard/api/v1/modes/test/streams/${mine}/timeline`)).status).toBe(401);
  });
});
