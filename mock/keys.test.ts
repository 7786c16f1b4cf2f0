/**
 * The dynamic mock's state per key (issue 43): each key is a brand of its own, at most `maxKeys`
 * are kept (the one unused the longest goes, with every row of its brand), and everything goes
 * when the mock stops.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadBuiltContract } from "../contract/built.ts";
import { DOCS_DIR } from "../scripts/docs-paths.ts";
import { type RunningDynamicMock, startDynamicMock } from "./dynamic.ts";
import { brandRemoval } from "./forget-brand.ts";
import { freePort, startMock } from "./prism.ts";

const contract = loadBuiltContract();
const newKey = (mode: "test" | "live" = "test") => `svc_${mode}_${randomBytes(16).toString("hex")}`;
const START = { creator_id: "avt_Qfmm3FkkaQM0", product_name: "Keys drop", platform: "youtube" };

async function call(base: string, key: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as any };
}

describe("the dynamic mock's keys", () => {
  let mock: RunningDynamicMock;
  beforeAll(async () => {
    mock = await startDynamicMock({ contract, port: 0, host: "127.0.0.1", docsDir: DOCS_DIR, maxKeys: 2 });
  });
  afterAll(() => mock?.stop());

  const streamsOf = async (key: string) => (await call(mock.url, key, "GET", "/streams")).body.total as number;

  it("gives each key a brand of its own: one key's streams are not another's", async () => {
    const [a, b] = [newKey(), newKey()];
    expect((await call(mock.url, a, "POST", "/streams", START)).status).toBe(201);
    expect([await streamsOf(a), await streamsOf(b)]).toEqual([1, 0]);
  });

  it("keeps at most maxKeys: a new key removes the one unused the longest, and only it", async () => {
    const [a, b, c] = [newKey(), newKey(), newKey()];
    for (const key of [a, b]) expect((await call(mock.url, key, "POST", "/streams", START)).status).toBe(201);
    // a is used again: b is now the one unused the longest.
    expect(await streamsOf(a)).toBe(1);
    expect(await streamsOf(c)).toBe(0);
    expect(mock.keys.size).toBe(2);
    expect(await streamsOf(a)).toBe(1);
    // b comes back as a new brand, with nothing; making it removes c, the oldest now.
    expect(await streamsOf(b)).toBe(0);
    expect(mock.keys.size).toBe(2);
  });

  it("leaves no row of a removed brand in any table", async () => {
    const [gone, kept] = [newKey(), newKey()];
    const created = await call(mock.url, gone, "POST", "/streams", START);
    const streamId = created.body.stream_id as string;
    const hook = await call(mock.url, gone, "POST", "/webhooks", {
      url: "https://hooks.keys.invalid/x",
      events: ["stream.ended"],
    });
    expect(hook.status).toBe(201);
    const ended = await fetch(`${mock.url}/api/v1/streams/${streamId}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${gone}`, "idempotency-key": "keys-test" },
    });
    expect(ended.status).toBe(200);
    expect((await call(mock.url, gone, "POST", "/test-clock/advance", { seconds: 60 })).status).toBe(200);
    const brandId = await mock.keys.brandOf(gone);
    // The delivery worker fans the event out to the webhook (and fails to reach its host).
    let deliveries: Array<{ id: string }> = [];
    for (let wait = 0; deliveries.length === 0 && wait < 100; wait++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      deliveries = await mock.db.query("SELECT id FROM webhook_deliveries WHERE brand_id = $1", [brandId]);
    }
    expect(deliveries.length).toBe(1);
    const traces = [brandId, streamId, hook.body.webhook_id as string, deliveries[0]!.id];
    const tables = (
      await mock.db.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'")
    ).map(({ name }) => name);
    const holding = async () => {
      const found: string[] = [];
      for (const table of tables)
        for (const trace of traces) {
          const [row] = await mock.db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM "${table}" t WHERE t::text LIKE '%' || $1 || '%'`,
            [trace],
          );
          if (row!.n > 0) found.push(`${table} holds ${trace}`);
        }
      return found;
    };
    expect((await holding()).length).toBeGreaterThan(4);
    // Two other keys: `gone`, unused the longest, is removed.
    await streamsOf(kept);
    await streamsOf(newKey());
    await new Promise((resolve) => setTimeout(resolve, 700)); // the request log's last batch, written every 0.5 s
    expect(await holding()).toEqual([]);
  });

  it("removes children before their parents, every table that refers to a brand's rows included", async () => {
    const statements = await brandRemoval(mock.db);
    const order = statements.map((statement) => /DELETE FROM "(\w+)"/.exec(statement)![1]);
    expect(order.at(-1)).toBe("brands");
    for (const [child, parent] of [
      ["webhook_attempts", "webhook_deliveries"],
      ["webhook_deliveries", "webhook_events"],
      ["webhook_deliveries", "webhooks"],
      ["provider_rooms", "streams"],
      ["idempotency_keys", "api_keys"],
    ])
      expect(order.indexOf(child!), `${child} before ${parent}`).toBeLessThan(order.indexOf(parent!));
    for (const table of ["rate_limit_windows", "request_log", "stream_positions", "test_clocks", "members"])
      expect(order).toContain(table);
    expect(order).not.toContain("creators");
  });
});

describe("the dynamic mock after a restart", () => {
  it("has forgotten every key and stream", async () => {
    const port = await freePort();
    const key = newKey();
    const first = await startMock({ dynamic: true, port });
    try {
      expect((await call(first.url, key, "POST", "/streams", START)).status).toBe(201);
      expect((await call(first.url, key, "GET", "/streams")).body.total).toBe(1);
    } finally {
      await first.stop();
    }
    const second = await startMock({ dynamic: true, port });
    try {
      expect((await call(second.url, key, "GET", "/streams")).body.total).toBe(0);
    } finally {
      await second.stop();
    }
  });
});
