// The partner's recovery of webhook deliveries over HTTP, on both engines: one delivery with every
// attempt and the exact payload; a retry (same event id and body, a fresh signature, a new series
// of attempts that names who asked); a recover of every failed delivery of a webhook since a
// time, bounded; Idempotency-Key replays that send nothing again; and brand and mode isolation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook } from "../../sdk/index.ts";
import type { DeliveryRequest } from "../providers/webhook-transport.ts";
import { availableEngines, CREATOR_ID, startTestServer, type TestServer } from "../../testkit/harness.ts";

interface Sent {
  url: string;
  body: string;
  signature: string;
}

describe.each(availableEngines())("webhook delivery recovery on %s", (engine) => {
  let server: TestServer;
  /** What the receivers got, and whether they are up. */
  const sent: Sent[] = [];
  let receiverUp = false;

  beforeAll(async () => {
    server = await startTestServer({
      engine,
      delivery: {
        // Three attempts in all, a retry due at once: the schedule's delays are tested elsewhere.
        retryScheduleMs: [0, 0],
        transport: {
          async send(request: DeliveryRequest) {
            sent.push({
              url: request.url,
              body: request.body,
              signature: String(request.headers["x-service-signature"]),
            });
            return receiverUp
              ? { ok: true, status: 200, body: "ok" }
              : { ok: false, status: 500, error: "HTTP 500", body: '{"error":"receiver down"}' };
          },
        },
      },
    });
  }, 120_000);
  afterAll(() => server?.close());

  /** Delivery passes until nothing is due (each pass makes the attempts due now). */
  async function deliverAll(): Promise<void> {
    for (let pass = 0; pass < 20 && (await server.deliver()) > 0; pass++);
  }

  /** A tenant with a webhook and a stream started and ended: two events, two deliveries. */
  async function failedTenant(environment: "test" | "live" = "test") {
    const { key, brandId } = await server.tenant({ environment, plan: "growth" });
    const webhook = await server.call("POST", "/api/v1/webhooks", {
      key,
      body: { url: `https://hooks.brand.example/${brandId}`, events: ["stream.started", "stream.ended"] },
    });
    const started = await server.call("POST", "/api/v1/streams", {
      key,
      body: {
        creator_id: CREATOR_ID,
        product_name: "Recovery",
        platform: "youtube",
        ...(environment === "live" ? { duration_minutes: 60 } : {}),
      },
    });
    expect(started.status).toBe(201);
    if (environment === "test")
      expect((await server.call("DELETE", `/api/v1/streams/${started.body.stream_id}`, { key })).status).toBe(200);
    receiverUp = false;
    await deliverAll();
    return { key, brandId, webhookId: webhook.body.webhook_id as string, secret: webhook.body.secret as string };
  }

  it("shows one delivery with every attempt, the receiver's answers and the exact payload", async () => {
    const { key } = await failedTenant();
    const failed = await server.call("GET", "/api/v1/webhooks/deliveries?status=failed", { key });
    expect(failed.body.total).toBe(2);
    const [first] = failed.body.deliveries;
    const detail = await server.call("GET", `/api/v1/webhooks/deliveries/${first.delivery_id}`, { key });
    expect(detail.status).toBe(200);
    expect(detail.body.delivery).toEqual(first);
    expect(detail.body.attempts.map((attempt: { attempt: number }) => attempt.attempt)).toEqual([1, 2, 3]);
    for (const attempt of detail.body.attempts)
      expect(attempt).toMatchObject({
        series: 0,
        response_status: 500,
        error: "HTTP 500",
        response_body: '{"error":"receiver down"}',
        trigger: "schedule",
        requested_by: null,
      });
    const body = sent.find((one) => one.body.includes(first.event_id))!.body;
    expect(detail.body.payload).toBe(body);
    expect(JSON.parse(detail.body.payload).id).toBe(first.event_id);
    // Not a UUID, or another brand's: 404.
    expect((await server.call("GET", "/api/v1/webhooks/deliveries/nope", { key })).status).toBe(404);
    const other = await server.tenant();
    const foreign = await server.call("GET", `/api/v1/webhooks/deliveries/${first.delivery_id}`, { key: other.key });
    expect([foreign.status, foreign.body.error.code]).toEqual([404, "not_found"]);
    expect(
      (await server.call("POST", `/api/v1/webhooks/deliveries/${first.delivery_id}/retry`, { key: other.key })).status,
    ).toBe(404);
  });

  it("retries one delivery: same event and body, a fresh signature, a new series naming the key", async () => {
    const { key, secret } = await failedTenant();
    const [delivery] = (await server.call("GET", "/api/v1/webhooks/deliveries?status=failed&limit=1", { key })).body
      .deliveries;
    const before = sent.length;
    server.clock.advance(5_000);
    const retried = await server.call("POST", `/api/v1/webhooks/deliveries/${delivery.delivery_id}/retry`, {
      key,
      headers: { "Idempotency-Key": `retry-${delivery.delivery_id}` },
    });
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({
      delivery_id: delivery.delivery_id,
      status: "pending",
      attempt: 0,
      event_id: delivery.event_id,
    });
    // A replay of the key answers the same and queues nothing more.
    const replay = await server.call("POST", `/api/v1/webhooks/deliveries/${delivery.delivery_id}/retry`, {
      key,
      headers: { "Idempotency-Key": `retry-${delivery.delivery_id}` },
    });
    expect([replay.status, replay.headers.get("idempotent-replayed")]).toEqual([202, "true"]);
    expect(replay.body).toEqual(retried.body);
    receiverUp = true;
    await deliverAll();
    const again = sent.slice(before);
    expect(again).toHaveLength(1);
    const original = sent.find((one) => one.body.includes(delivery.event_id))!;
    expect(again[0]!.body).toBe(original.body);
    expect(again[0]!.signature).not.toBe(original.signature);
    // Signed at the server's (manual) clock: verified at that time.
    const at = { now: () => server.clock().getTime() };
    expect(verifyWebhook(again[0]!.body, again[0]!.signature, secret, at).id).toBe(delivery.event_id);
    const detail = (await server.call("GET", `/api/v1/webhooks/deliveries/${delivery.delivery_id}`, { key })).body;
    expect(detail.delivery).toMatchObject({ status: "succeeded", attempt: 1 });
    expect(detail.attempts.at(-1)).toMatchObject({
      series: 1,
      attempt: 1,
      response_status: 200,
      trigger: "retry",
      requested_by: expect.stringMatching(/^svc_test_…\w{4}$/),
    });
    // A succeeded delivery may be sent again too.
    expect(
      (await server.call("POST", `/api/v1/webhooks/deliveries/${delivery.delivery_id}/retry`, { key })).status,
    ).toBe(202);
  });

  it("recovers every failed delivery of a webhook since a time; bounded and idempotent", async () => {
    const { key, webhookId } = await failedTenant();
    const now = server.clock();
    const tooOld = await server.call("POST", "/api/v1/webhooks/recover", {
      key,
      body: { webhook_id: webhookId, since: new Date(now.getTime() - 8 * 86_400_000).toISOString() },
    });
    expect([tooOld.status, tooOld.body.error.code]).toEqual([400, "invalid_fields"]);
    const future = await server.call("POST", "/api/v1/webhooks/recover", {
      key,
      body: { webhook_id: webhookId, since: new Date(now.getTime() + 60_000).toISOString() },
    });
    expect([future.status, future.body.error.code]).toEqual([400, "invalid_fields"]);
    // A leap second passes the contract's date-time but is no time JavaScript holds: 400, not 500.
    const day = new Date(now.getTime() - 86_400_000).toISOString().slice(0, 10);
    const leap = await server.call("POST", "/api/v1/webhooks/recover", {
      key,
      body: { webhook_id: webhookId, since: `${day}T23:59:60Z` },
    });
    expect([leap.status, leap.body.error?.code]).toEqual([400, "invalid_fields"]);
    const missing = await server.call("POST", "/api/v1/webhooks/recover", { key, body: { webhook_id: webhookId } });
    expect([missing.status, missing.body.error.code]).toEqual([400, "missing_fields"]);
    const other = await server.tenant();
    const foreign = await server.call("POST", "/api/v1/webhooks/recover", {
      key: other.key,
      body: { webhook_id: webhookId, since: new Date(now.getTime() - 3_600_000).toISOString() },
    });
    expect([foreign.status, foreign.body.error.code]).toEqual([404, "not_found"]);

    const since = new Date(now.getTime() - 3_600_000).toISOString();
    const headers = { "Idempotency-Key": `recover-${webhookId}` };
    const recovered = await server.call("POST", "/api/v1/webhooks/recover", {
      key,
      headers,
      body: { webhook_id: webhookId, since },
    });
    expect([recovered.status, recovered.body]).toEqual([202, { queued: 2, has_more: false }]);
    const replay = await server.call("POST", "/api/v1/webhooks/recover", {
      key,
      headers,
      body: { webhook_id: webhookId, since },
    });
    expect([replay.status, replay.headers.get("idempotent-replayed"), replay.body]).toEqual([
      202,
      "true",
      { queued: 2, has_more: false },
    ]);
    const reused = await server.call("POST", "/api/v1/webhooks/recover", {
      key,
      headers,
      body: { webhook_id: webhookId, since: now.toISOString() },
    });
    expect([reused.status, reused.body.error.code]).toEqual([422, "idempotency_key_reused"]);
    // Nothing failed is left: a second recover queues nothing.
    expect(
      (await server.call("POST", "/api/v1/webhooks/recover", { key, body: { webhook_id: webhookId, since } })).body,
    ).toEqual({ queued: 0, has_more: false });
    receiverUp = true;
    await deliverAll();
    const listed = await server.call("GET", `/api/v1/webhooks/deliveries?webhook_id=${webhookId}`, { key });
    expect(listed.body.deliveries.map((one: { status: string }) => one.status)).toEqual(["succeeded", "succeeded"]);
  });

  it("keeps modes apart, and retries nothing to a deleted webhook", async () => {
    const test = await failedTenant();
    const [delivery] = (
      await server.call("GET", "/api/v1/webhooks/deliveries?status=failed&limit=1", { key: test.key })
    ).body.deliveries;
    const live = await server.key(test.brandId, { environment: "live" });
    expect(
      (await server.call("GET", `/api/v1/webhooks/deliveries/${delivery.delivery_id}`, { key: live.key })).status,
    ).toBe(404);
    expect(
      (await server.call("POST", `/api/v1/webhooks/deliveries/${delivery.delivery_id}/retry`, { key: live.key }))
        .status,
    ).toBe(404);
    expect((await server.call("DELETE", `/api/v1/webhooks?id=${test.webhookId}`, { key: test.key })).status).toBe(200);
    const gone = await server.call("POST", `/api/v1/webhooks/deliveries/${delivery.delivery_id}/retry`, {
      key: test.key,
    });
    expect([gone.status, gone.body.error.code]).toEqual([404, "not_found"]);
    expect(gone.body.error.message).toContain("was deleted");
    // A delivery not yet attempted (pending) of a webhook deleted since: 404 too, nothing queued.
    const fresh = await server.tenant();
    const hook = await server.call("POST", "/api/v1/webhooks", {
      key: fresh.key,
      body: { url: "https://hooks.brand.example/pending", events: ["stream.started"] },
    });
    await server.call("POST", "/api/v1/streams", {
      key: fresh.key,
      body: { creator_id: CREATOR_ID, product_name: "Pending", platform: "youtube" },
    });
    const [pending] = (await server.call("GET", "/api/v1/webhooks/deliveries", { key: fresh.key })).body.deliveries;
    expect(pending.status).toBe("pending");
    await server.call("DELETE", `/api/v1/webhooks?id=${hook.body.webhook_id}`, { key: fresh.key });
    const pendingGone = await server.call("POST", `/api/v1/webhooks/deliveries/${pending.delivery_id}/retry`, {
      key: fresh.key,
    });
    expect([pendingGone.status, pendingGone.body.error?.code]).toEqual([404, "not_found"]);
  });
});
