import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook, WebhookTimestampTooOldError } from "../../sdk/index.ts";
import { httpsTransport, type Resolver } from "../providers/webhook-transport.ts";
import { seedCreators } from "../store/creators.ts";
import { openDatabase } from "../store/database.ts";
import { migrate } from "../store/migrate.ts";
import { startReceiver } from "../../testkit/https-receiver.ts";
import { testDatabaseUrl } from "../config.ts";
import {
  ADMIN_TOKEN,
  freshDatabase,
  manualClock,
  startTestServer,
  streamBody,
  type TestServer,
} from "../../testkit/harness.ts";

const SHORT_SCHEDULE = [1_000, 2_000, 3_000, 4_000, 5_000];
/** localhost always means the receiver on 127.0.0.1 here, whatever the machine's resolver says. */
const localResolver: Resolver = async () => [{ address: "127.0.0.1", family: 4 }];

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let server: TestServer;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startTestServer({
    config: { webhookAllowHosts: ["localhost"] },
    delivery: {
      transport: httpsTransport({
        timeoutMs: 500,
        allowHosts: ["localhost"],
        resolver: localResolver,
        ca: receiver.cert,
      }),
      timeoutMs: 500,
      retryScheduleMs: SHORT_SCHEDULE,
    },
  });
});
afterAll(async () => {
  await server.close();
  await receiver.close();
});

async function registered(
  events = ["stream.started", "stream.ended", "stream.error"],
  options: { environment?: "test" | "live"; path?: string } = {},
) {
  const tenant = await server.tenant({ environment: options.environment ?? "test" });
  const hook = await server.call("POST", "/api/v1/webhooks", {
    key: tenant.key,
    body: { url: receiver.url(options.path), events },
  });
  expect(hook.status).toBe(201);
  return { ...tenant, webhookId: hook.body.webhook_id as string, secret: hook.body.secret as string };
}

const deliveriesOf = async (brandId: string) =>
  (await server.call("GET", `/admin/v1/webhook-deliveries?brand_id=${brandId}`, { key: ADMIN_TOKEN })).body.deliveries;

describe("webhook delivery", () => {
  it("delivers stream.started then stream.ended over HTTPS, each verified by the SDK's verifyWebhook", async () => {
    receiver.behave("ok");
    const before = receiver.hooks().length;
    const { key, secret, brandId } = await registered(undefined, { path: "/ordered" });
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    await server.deliver();
    await server.call("DELETE", `/api/v1/streams/${created.body.stream_id}`, { key });
    await server.deliver();

    const got = receiver
      .hooks()
      .slice(before)
      .filter((request) => request.path === "/ordered");
    expect(got).toHaveLength(2);
    const now = () => server.clock().getTime();
    const events = got.map((request) =>
      verifyWebhook(request.body, request.headers["x-service-signature"] as string, secret, { now }),
    );
    expect(events.map((event) => event.type)).toEqual(["stream.started", "stream.ended"]);
    expect(events[0]).toMatchObject({
      id: expect.stringMatching(/^evt_/),
      data: { stream_id: created.body.stream_id, status: "live", platform: "youtube", vertical: "live-commerce" },
    });
    expect(events[1]!.data.status).toBe("ended");
    expect(got[0]!.headers["content-type"]).toBe("application/json");
    expect((await deliveriesOf(brandId)).every((delivery: { status: string }) => delivery.status === "succeeded")).toBe(
      true,
    );
  });

  it("retries a receiver answering 500 on the schedule: 6 attempts in all, same event id, a fresh t each time, visible to the operator", async () => {
    receiver.behave("fail");
    const { key, brandId } = await registered(["stream.started"], { path: "/failing" });
    await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    for (const wait of [0, ...SHORT_SCHEDULE, 60_000]) {
      server.clock.advance(wait);
      await server.deliver();
    }
    const attempts = receiver.hooks().filter((request) => request.path === "/failing");
    expect(attempts).toHaveLength(6);
    const ids = attempts.map((request) => JSON.parse(request.body).id);
    expect(new Set(ids).size).toBe(1);
    const stamps = attempts.map((request) => /t=(\d+)/.exec(request.headers["x-service-signature"] as string)![1]);
    expect(new Set(stamps).size).toBe(6);
    const [delivery] = await deliveriesOf(brandId);
    expect(delivery).toMatchObject({
      status: "failed",
      attempt: 6,
      response_status: 500,
      next_attempt_at: null,
      event_type: "stream.started",
    });
    receiver.behave("ok");
  });

  it("treats a 302 as a failure and never calls the redirect target", async () => {
    receiver.behave("redirect");
    const { key, brandId } = await registered(["stream.started"], { path: "/redirecting" });
    await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    await server.deliver();
    expect(receiver.received.some((request) => request.path === "/redirect-target")).toBe(false);
    const [delivery] = await deliveriesOf(brandId);
    expect(delivery).toMatchObject({ status: "pending", attempt: 1, response_status: 302 });
    expect(delivery.error).toMatch(/redirect/);
    receiver.behave("ok");
  });

  it("fails an attempt after the time-out when the receiver never answers", async () => {
    receiver.behave("hang");
    const { key, brandId } = await registered(["stream.started"], { path: "/hanging" });
    await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    await server.deliver();
    const [delivery] = await deliveriesOf(brandId);
    expect(delivery).toMatchObject({ status: "pending", attempt: 1, response_status: null });
    expect(delivery.error).toMatch(/timed out/);
    receiver.behave("ok");
  });

  it("sends only registered event types, and nothing to other brands or the other mode", async () => {
    receiver.behave("ok");
    const endedOnly = await registered(["stream.ended"], { path: "/ended-only" });
    const otherBrand = await registered(undefined, { path: "/other-brand" });
    const liveMode = await server.key(endedOnly.brandId, { environment: "live" });
    await server.call("POST", "/api/v1/webhooks", {
      key: liveMode.key,
      body: { url: receiver.url("/live-mode"), events: ["stream.started", "stream.ended"] },
    });

    const created = await server.call("POST", "/api/v1/streams", { key: endedOnly.key, body: streamBody() });
    await server.call("DELETE", `/api/v1/streams/${created.body.stream_id}`, { key: endedOnly.key });
    await server.deliver();

    const types = receiver
      .hooks()
      .filter((request) => request.path === "/ended-only")
      .map((request) => JSON.parse(request.body).type);
    expect(types).toEqual(["stream.ended"]);
    expect(receiver.hooks().filter((request) => ["/other-brand", "/live-mode"].includes(request.path))).toEqual([]);
    void otherBrand;
  });

  it("refuses at delivery a host whose resolver answer includes a private address, without connecting, and fails the delivery at once", async () => {
    const refusing = await startTestServer({
      delivery: {
        transport: httpsTransport({
          timeoutMs: 500,
          resolver: async () => [
            { address: "93.184.216.34", family: 4 },
            { address: "10.0.0.5", family: 4 },
          ],
        }),
      },
    });
    try {
      const { key, brandId } = await refusing.tenant();
      expect(
        (
          await refusing.call("POST", "/api/v1/webhooks", {
            key,
            body: { url: "https://hooks.example.com/x", events: ["stream.started"] },
          })
        ).status,
      ).toBe(201);
      await refusing.call("POST", "/api/v1/streams", { key, body: streamBody() });
      await refusing.deliver();
      const [delivery] = (
        await refusing.call("GET", `/admin/v1/webhook-deliveries?brand_id=${brandId}`, { key: ADMIN_TOKEN })
      ).body.deliveries;
      expect(delivery).toMatchObject({ attempt: 1, status: "failed", response_status: null, next_attempt_at: null });
      expect(delivery.error).toMatch(/^refused: hooks\.example\.com resolves to non-public address 10\.0\.0\.5$/);
      refusing.clock.advance(86_400_000);
      expect(await refusing.deliver()).toBe(0);
    } finally {
      await refusing.close();
    }
  });

  it("fails an attempt whose DNS lookup never answers once the time-out has passed", async () => {
    const stalled = await startTestServer({
      delivery: { transport: httpsTransport({ timeoutMs: 300, resolver: () => new Promise(() => undefined) }) },
    });
    try {
      const { key, brandId } = await stalled.tenant();
      await stalled.call("POST", "/api/v1/webhooks", {
        key,
        body: { url: "https://hooks.example.com/x", events: ["stream.started"] },
      });
      await stalled.call("POST", "/api/v1/streams", { key, body: streamBody() });
      expect(await stalled.deliver()).toBe(1);
      const [delivery] = (
        await stalled.call("GET", `/admin/v1/webhook-deliveries?brand_id=${brandId}`, { key: ADMIN_TOKEN })
      ).body.deliveries;
      expect(delivery).toMatchObject({ attempt: 1, status: "pending", response_status: null });
      expect(delivery.error).toMatch(/dns lookup failed: no answer within 300 ms/);
    } finally {
      await stalled.close();
    }
  });

  it("records an event without a delivery row per webhook; the worker expands it to the 14 webhooks subscribed when it happened, under the ids the operator saw at once", async () => {
    // Receivers that answer at once, without a network: what is under test is who gets what.
    const sent: string[] = [];
    const fanning = await startTestServer({
      delivery: {
        transport: { send: async (request) => (sent.push(new URL(request.url).pathname), { ok: true, status: 204 }) },
      },
    });
    try {
      const { key, brandId } = await fanning.tenant();
      const hooks: string[] = [];
      // 14, the ended-only one and the late one below: the brand's 16, its most in a mode.
      for (let i = 0; i < 14; i++) {
        const hook = await fanning.call("POST", "/api/v1/webhooks", {
          key,
          body: { url: `https://hooks.example.com/fan-${i}`, events: ["stream.started"] },
        });
        expect(hook.status).toBe(201);
        hooks.push(hook.body.webhook_id);
      }
      await fanning.call("POST", "/api/v1/webhooks", {
        key,
        body: { url: "https://hooks.example.com/ended-only", events: ["stream.ended"] },
      });
      expect((await fanning.call("POST", "/api/v1/streams", { key, body: streamBody() })).status).toBe(201);

      // The request wrote the event alone; the operator already sees its 14 deliveries, pending.
      const [written] = await fanning.db.query<{ count: number }>(
        "SELECT count(*)::int AS count FROM webhook_deliveries WHERE brand_id = $1",
        [brandId],
      );
      expect(Number(written!.count)).toBe(0);
      const list = async () =>
        (await fanning.call("GET", `/admin/v1/webhook-deliveries?brand_id=${brandId}`, { key: ADMIN_TOKEN })).body
          .deliveries;
      const before = await list();
      expect(before).toHaveLength(14);
      expect(
        before.every(
          (delivery: { status: string; attempt: number }) => delivery.status === "pending" && delivery.attempt === 0,
        ),
      ).toBe(true);
      expect(new Set(before.map((delivery: { webhook_id: string }) => delivery.webhook_id))).toEqual(new Set(hooks));

      // After the event: a webhook registered (it does not get the event) and one deleted (its delivery is not sent).
      await fanning.call("POST", "/api/v1/webhooks", {
        key,
        body: { url: "https://hooks.example.com/late", events: ["stream.started"] },
      });
      expect((await fanning.call("DELETE", `/api/v1/webhooks?id=${hooks[0]}`, { key })).status).toBe(200);
      while ((await fanning.deliver()) > 0);

      expect([...sent].sort()).toEqual(
        hooks
          .slice(1)
          .map((_, i) => `/fan-${i + 1}`)
          .sort(),
      );
      const after = await list();
      expect(after.map((delivery: { delivery_id: string }) => delivery.delivery_id).sort()).toEqual(
        before.map((delivery: { delivery_id: string }) => delivery.delivery_id).sort(),
      );
      const byWebhook = new Map(after.map((delivery: { webhook_id: string }) => [delivery.webhook_id, delivery]));
      expect(byWebhook.get(hooks[0]!)).toMatchObject({
        status: "failed",
        attempt: 1,
        error: "webhook was deleted; not sent",
      });
      expect(hooks.slice(1).every((id) => (byWebhook.get(id) as { status: string }).status === "succeeded")).toBe(true);
    } finally {
      await fanning.close();
    }
  });

  it("lets receivers reject a replay of an old delivery", async () => {
    receiver.behave("ok");
    const { key, secret } = await registered(["stream.started"], { path: "/replay" });
    await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    await server.deliver();
    const [request] = receiver.hooks().filter((r) => r.path === "/replay");
    const later = () => server.clock().getTime() + 301_000;
    expect(() =>
      verifyWebhook(request!.body, request!.headers["x-service-signature"] as string, secret, { now: later }),
    ).toThrow(WebhookTimestampTooOldError);
  });
});

describe("local webhook development in one step", () => {
  it("delivers over plain http to a host in WEBHOOK_ALLOW_HOSTS; every other host stays https-only", async () => {
    const received: Array<{ body: string; signature: string }> = [];
    const plain = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        received.push({ body, signature: String(req.headers["x-service-signature"]) });
        res.writeHead(204).end();
      });
    });
    plain.listen(0, "127.0.0.1");
    await once(plain, "listening");
    const url = `http://127.0.0.1:${(plain.address() as AddressInfo).port}/hooks`;
    const local = await startTestServer({
      config: { webhookAllowHosts: ["127.0.0.1"] },
      delivery: { transport: httpsTransport({ timeoutMs: 2_000, allowHosts: ["127.0.0.1"] }) },
    });
    try {
      const { key } = await local.tenant();
      const hook = await local.call("POST", "/api/v1/webhooks", { key, body: { url, events: ["stream.started"] } });
      expect(hook.status).toBe(201);
      const refused = await local.call("POST", "/api/v1/webhooks", {
        key,
        body: { url: url.replace("127.0.0.1", "localhost"), events: ["stream.started"] },
      });
      expect(refused.body.error.code).toBe("invalid_url");
      expect(refused.body.error.message).toMatch(/live-stream-hosting listen.*WEBHOOK_ALLOW_HOSTS/);
      const created = await local.call("POST", "/api/v1/streams", { key, body: streamBody() });
      await local.deliver();
      expect(received).toHaveLength(1);
      const event = verifyWebhook(received[0]!.body, received[0]!.signature, hook.body.secret, {
        now: () => local.clock().getTime(),
      });
      expect(event).toMatchObject({ type: "stream.started", data: { stream_id: created.body.stream_id } });

      const strict = httpsTransport({ timeoutMs: 2_000, allowHosts: [] });
      expect(await strict.send({ url, body: "{}", headers: {} })).toEqual({
        ok: false,
        status: null,
        error: "refused: url is not https",
        permanent: true,
      });
      expect(received).toHaveLength(1);
    } finally {
      await local.close();
      plain.close();
    }
  });
});

describe("webhook delivery across a restart", () => {
  it("delivers what was pending when the app stopped, and never again after a 2xx", async () => {
    // The same stored database opened twice: a PGlite data directory, or a PostgreSQL database.
    const dataDir = mkdtempSync(join(tmpdir(), "lsh-restart-"));
    const postgres = testDatabaseUrl() ? await freshDatabase("postgres") : null;
    const open = async () => {
      const db = postgres ? await openDatabase(postgres.url) : await openDatabase(undefined, { dataDir });
      await migrate(db);
      await seedCreators(db);
      return db;
    };
    const local = await startReceiver();
    const clock = manualClock();
    const delivery = {
      transport: httpsTransport({ timeoutMs: 500, allowHosts: ["localhost"], resolver: localResolver, ca: local.cert }),
      retryScheduleMs: SHORT_SCHEDULE,
    };
    try {
      const firstDb = await open();
      const first = await startTestServer({
        database: firstDb,
        clock,
        config: { webhookAllowHosts: ["localhost"] },
        delivery,
      });
      const { key } = await first.tenant();
      await first.call("POST", "/api/v1/webhooks", {
        key,
        body: { url: local.url(), events: ["stream.started", "stream.ended"] },
      });
      const created = await first.call("POST", "/api/v1/streams", { key, body: streamBody() });
      await first.call("DELETE", `/api/v1/streams/${created.body.stream_id}`, { key });
      await first.close();
      await firstDb.close();
      expect(local.hooks()).toHaveLength(0);

      const secondDb = await open();
      const second = await startTestServer({
        database: secondDb,
        clock,
        config: { webhookAllowHosts: ["localhost"] },
        delivery,
      });
      await second.deliver();
      expect(
        local
          .hooks()
          .map((request) => JSON.parse(request.body).type)
          .sort(),
      ).toEqual(["stream.ended", "stream.started"]);
      for (let i = 0; i < 3; i++) {
        clock.advance(3_600_000);
        await second.deliver();
      }
      expect(local.hooks()).toHaveLength(2);
      await second.close();
      await secondDb.close();
    } finally {
      await local.close();
      await postgres?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
