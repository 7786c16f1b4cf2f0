// GET /webhooks/deliveries pages like the other lists (limit, offset, total) and filters by
// webhook_id and stream_id; the SDK walks every page with webhooks.listAllDeliveries(). On PGlite
// and, with TEST_DATABASE_URL, on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type LiveStreamClient } from "../../sdk/index.ts";
import { availableEngines, CREATOR_ID, startTestServer, type TestServer } from "../../testkit/harness.ts";

describe.each(availableEngines())("GET /webhooks/deliveries on %s", (engine) => {
  let server: TestServer;
  let client: LiveStreamClient;
  let key: string;
  const webhookIds: string[] = [];
  const streamIds: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({ engine });
    ({ key } = await server.tenant());
    client = createClient({ baseUrl: `${server.baseUrl}/api/v1`, apiKey: key, retry: { maxRetries: 0 } });
    for (const path of ["a", "b"]) {
      const webhook = await client.webhooks.create({
        url: `https://hooks.brand.example/${path}`,
        events: ["stream.started", "stream.ended"],
      });
      webhookIds.push(webhook.webhook_id);
    }
    // Three test streams, started and ended: 2 events × 2 webhooks each, 12 deliveries.
    for (let i = 0; i < 3; i++) {
      const stream = await client.streams.create({
        creator_id: CREATOR_ID,
        product_name: `Drop ${i}`,
        platform: "youtube",
      });
      await client.streams.end(stream.stream_id);
      streamIds.push(stream.stream_id);
    }
  });
  afterAll(async () => {
    await server?.close();
  });

  const call = (query: string) => server.call("GET", `/api/v1/webhooks/deliveries${query}`, { key });

  it("answers a page with limit, offset and total; pages do not overlap and cover every delivery", async () => {
    const first = await call("?limit=5");
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ total: 12, limit: 5, offset: 0 });
    expect(first.body.deliveries).toHaveLength(5);
    const seen: string[] = [];
    for (let offset = 0; offset < 15; offset += 5) {
      const page = await call(`?limit=5&offset=${offset}`);
      expect(page.body.total).toBe(12);
      seen.push(...page.body.deliveries.map((delivery: { delivery_id: string }) => delivery.delivery_id));
    }
    expect(seen).toHaveLength(12);
    expect(new Set(seen).size).toBe(12);
    // Without paging parameters: the first 100, as before.
    expect((await call("")).body).toMatchObject({ total: 12, limit: 100, offset: 0 });
  });

  it("filters by webhook_id, alone and with stream_id; another brand's webhook matches nothing", async () => {
    const one = await call(`?webhook_id=${webhookIds[0]}`);
    expect(one.body.total).toBe(6);
    expect(new Set(one.body.deliveries.map((delivery: { webhook_id: string }) => delivery.webhook_id))).toEqual(
      new Set([webhookIds[0]]),
    );
    const both = await call(`?webhook_id=${webhookIds[1]}&stream_id=${streamIds[0]}`);
    expect(both.body.total).toBe(2);
    const other = await server.tenant();
    const foreign = await server.call("GET", `/api/v1/webhooks/deliveries?webhook_id=${webhookIds[0]}`, {
      key: other.key,
    });
    expect(foreign.body).toEqual({ deliveries: [], total: 0, limit: 100, offset: 0 });
  });

  it("answers 400 invalid_fields for a webhook_id that is not a UUID or an unknown status", async () => {
    for (const query of ["?webhook_id=whk_1", "?stream_id=1", "?status=exhausted", "?status="]) {
      const answer = await call(query);
      expect({ query, status: answer.status, code: answer.body.error?.code }).toEqual({
        query,
        status: 400,
        code: "invalid_fields",
      });
    }
  });

  it("clamps paging values as GET /streams does: never a 400 for them", async () => {
    const cases: Array<[string, { limit: number; offset: number }]> = [
      ["?limit=0", { limit: 1, offset: 0 }],
      ["?limit=1000", { limit: 100, offset: 0 }],
      ["?limit=-3&offset=-1", { limit: 1, offset: 0 }],
      ["?limit=5&offset=99999999999999999999", { limit: 5, offset: 9007199254740991 }],
      ["?limit=abc", { limit: 100, offset: 0 }],
    ];
    for (const [query, paging] of cases) {
      const answer = await call(query);
      expect({ query, status: answer.status, ...paging }).toEqual({
        query,
        status: 200,
        limit: answer.body.limit,
        offset: answer.body.offset,
      });
    }
  });

  it("filters by status", async () => {
    const pending = await call("?status=pending");
    expect(pending.body.total).toBe(12);
    expect((await call("?status=failed")).body.total).toBe(0);
    expect((await call("?status=succeeded")).body).toMatchObject({ deliveries: [], total: 0 });
  });

  it("the SDK's listAllDeliveries walks every page", async () => {
    const all = [];
    for await (const delivery of client.webhooks.listAllDeliveries({ limit: 5 })) all.push(delivery);
    expect(all).toHaveLength(12);
    const ofOne = [];
    for await (const delivery of client.webhooks.listAllDeliveries({ webhook_id: webhookIds[1]!, limit: 4 }))
      ofOne.push(delivery);
    expect(ofOne).toHaveLength(6);
    expect(ofOne.every((delivery) => delivery.webhook_id === webhookIds[1])).toBe(true);
  });
});
