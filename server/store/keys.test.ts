import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../domain/keys.ts";
import { createBrand, createKey } from "../services/operator.ts";
import { availableEngines, freshDatabase } from "../../testkit/harness.ts";
import type { Database, Queryable } from "./database.ts";
import { findKeyWithBrandCounted, listKeys, revokeKey, usableKeyCount } from "./keys.ts";

const T0 = new Date("2026-11-20T12:00:00.000Z");
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const minute = (n: number) => at(n * 60);

// The server uses it on PostgreSQL only (PGlite counts in memory), but it holds on both engines.
describe.each(availableEngines())("counting a key's request in its brand's window on %s", (engine) => {
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await freshDatabase(engine));
  });
  afterAll(() => drop());

  async function brandWithKeys(count: number, expiresAt: string | null = null) {
    const brand = await db.transaction((tx) =>
      createBrand(tx, { name: "Counted", vertical: "live-commerce", plan: "growth" }, T0),
    );
    const keys = [];
    for (let i = 0; i < count; i++) {
      const { record, key } = await createKey(
        db,
        { brand_id: brand.id, name: `k${i}`, environment: "test", scopes: ["streams:read"], expires_at: expiresAt },
        T0,
      );
      keys.push({ id: record.id, hash: hashApiKey(key) });
    }
    return { brandId: brand.id, keys };
  }

  const windowsOf = async (brandId: string) =>
    (
      await db.query<{ window_start: Date; count: number }>(
        "SELECT window_start, count FROM rate_limit_windows WHERE brand_id = $1 ORDER BY window_start",
        [brandId],
      )
    ).map((row) => `${new Date(row.window_start).toISOString()} ${row.count}`);

  it("counts every key of the brand in one window and returns the key, its brand and the count", async () => {
    const { brandId, keys } = await brandWithKeys(2);
    const counts = [];
    for (let i = 0; i < 4; i++)
      counts.push((await findKeyWithBrandCounted(db, keys[i % 2]!.hash, minute(0), at(i)))!.windowCount);
    expect(counts).toEqual([1, 2, 3, 4]);
    const found = await findKeyWithBrandCounted(db, keys[0]!.hash, minute(0), at(5));
    expect(found).toMatchObject({
      key: { id: keys[0]!.id, brandId },
      brand: { id: brandId, rateLimitPerMinute: 100 },
      windowCount: 5,
    });
  });

  it("starts a new window at 1 and deletes the brand's windows before the previous one, not another brand's", async () => {
    const { brandId, keys } = await brandWithKeys(1);
    const other = await brandWithKeys(1);
    await findKeyWithBrandCounted(db, keys[0]!.hash, minute(0), at(1));
    await findKeyWithBrandCounted(db, other.keys[0]!.hash, minute(0), at(1));
    expect((await findKeyWithBrandCounted(db, keys[0]!.hash, minute(1), at(61)))!.windowCount).toBe(1);
    // The previous window stays: a process whose clock is a little behind still counts into it,
    // rather than starting it afresh at 1.
    expect((await findKeyWithBrandCounted(db, keys[0]!.hash, minute(0), at(59)))!.windowCount).toBe(2);
    expect((await findKeyWithBrandCounted(db, keys[0]!.hash, minute(2), at(121)))!.windowCount).toBe(1);
    expect(await windowsOf(brandId)).toEqual([`${minute(1).toISOString()} 1`, `${minute(2).toISOString()} 1`]);
    expect(await windowsOf(other.brandId)).toEqual([`${minute(0).toISOString()} 1`]);
  });

  it("does not count a revoked or expired key, and finds nothing for an unknown hash", async () => {
    const { brandId, keys } = await brandWithKeys(2);
    const expiring = await brandWithKeys(1, at(30).toISOString());
    await revokeKey(db, keys[1]!.id, at(1));
    expect(await findKeyWithBrandCounted(db, keys[1]!.hash, minute(0), at(2))).toMatchObject({
      key: { id: keys[1]!.id },
      windowCount: null,
    });
    expect((await findKeyWithBrandCounted(db, expiring.keys[0]!.hash, minute(0), at(29)))!.windowCount).toBe(1);
    expect((await findKeyWithBrandCounted(db, expiring.keys[0]!.hash, minute(0), at(30)))!.windowCount).toBeNull();
    expect(await findKeyWithBrandCounted(db, hashApiKey(`svc_test_${"z".repeat(32)}`), minute(0), at(3))).toBeNull();
    expect(await windowsOf(brandId)).toEqual([]);
    expect(await windowsOf(expiring.brandId)).toEqual([`${minute(0).toISOString()} 1`]);
  });
});

// The key cap and the key list run under the brand's lock: revoked keys, which grow without bound,
// must not be read to count or list the usable ones. A plan with sequential scans forbidden shows
// which index each query can use (on a table this small the planner would otherwise scan it).
describe.each(availableEngines())("reading a brand's keys past its revoked ones on %s", (engine) => {
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await freshDatabase(engine));
  });
  afterAll(() => drop());

  /** The plans of the queries `read` sends, as PostgreSQL's EXPLAIN prints them. */
  async function plansOf(read: (db: Queryable) => Promise<unknown>): Promise<string[]> {
    const sent: { sql: string; params?: unknown[] }[] = [];
    await read({
      query: async (sql: string, params?: unknown[]) => {
        sent.push({ sql, params });
        return [];
      },
    } as unknown as Queryable);
    return db.transaction(async (tx) => {
      await tx.query("SET LOCAL enable_seqscan = off");
      const plans = [];
      for (const { sql, params } of sent) {
        const rows = await tx.query<{ "QUERY PLAN": string }>(`EXPLAIN ${sql}`, params);
        plans.push(rows.map((row) => row["QUERY PLAN"]).join("\n"));
      }
      return plans;
    });
  }

  it("counts usable keys through the unrevoked-keys index", async () => {
    const [plan] = await plansOf((q) => usableKeyCount(q, "00000000-0000-0000-0000-000000000000", T0));
    expect(plan).toContain("api_keys_brand_unrevoked");
  });

  it("lists unrevoked keys through the unrevoked-keys index", async () => {
    const [plan] = await plansOf((q) => listKeys(q, "00000000-0000-0000-0000-000000000000", { limit: 100, now: T0 }));
    expect(plan).toContain("api_keys_brand_unrevoked");
  });

  it("lists usable keys first, then the newest others, even past many revoked ones", async () => {
    const brand = await db.transaction((tx) =>
      createBrand(tx, { name: "Revoker", vertical: "live-commerce", plan: "growth" }, T0),
    );
    const make = async (i: number, expiresAt: string | null = null) =>
      (
        await createKey(
          db,
          { brand_id: brand.id, name: `k${i}`, environment: "test", scopes: ["streams:read"], expires_at: expiresAt },
          at(i),
        )
      ).record.id;
    const usable = await make(0);
    const revoked = [];
    for (let i = 1; i <= 5; i++) {
      revoked.push(await make(i));
      await revokeKey(db, revoked.at(-1)!, at(10));
    }
    const expired = await make(6, at(7).toISOString());
    const listed = await listKeys(db, brand.id, { limit: 3, now: at(20) });
    expect(listed.map((key) => key.id)).toEqual([usable, revoked[4], expired]);
    expect(await usableKeyCount(db, brand.id, at(20))).toBe(1);
  });
});
