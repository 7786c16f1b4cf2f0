import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database, Queryable } from "../store/database.ts";
import { availableEngines, freshDatabase } from "../../testkit/harness.ts";
import { keyUseRecorder } from "./key-use.ts";
import { createBrand, createKey } from "./operator.ts";

const T0 = new Date("2026-11-20T12:00:00.000Z");
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

describe.each(availableEngines())("recording API keys' last use on %s", (engine) => {
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await freshDatabase(engine));
  });
  afterAll(() => drop());

  async function newKey(): Promise<string> {
    const brand = await db.transaction((tx) =>
      createBrand(tx, { name: "Used", vertical: "live-commerce", plan: "growth" }, T0),
    );
    return (await createKey(db, { brand_id: brand.id, name: "k", environment: "test", scopes: ["streams:read"] }, T0))
      .record.id;
  }

  /** One process's recorder, counting the statements it sends. */
  function processRecorder() {
    const counted = { statements: 0 };
    const counting: Queryable = {
      query: (sql, params) => {
        counted.statements += 1;
        return db.query(sql, params);
      },
    };
    return Object.assign(counted, {
      record: keyUseRecorder(counting, { onError: (error) => expect.fail(String(error)) }),
    });
  }

  const lastUsed = async (keyId: string) =>
    (
      await db.query<{ last_used_at: Date | string | null }>("SELECT last_used_at FROM api_keys WHERE id = $1", [keyId])
    )[0]!.last_used_at;
  const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

  it("writes a key's use at most once a minute in a process", async () => {
    const keyId = await newKey();
    const one = processRecorder();
    expect(await lastUsed(keyId)).toBeNull();
    await one.record(keyId, at(0));
    for (const second of [1, 30, 59]) await one.record(keyId, at(second));
    expect([one.statements, iso(await lastUsed(keyId))]).toEqual([1, at(0).toISOString()]);
    await one.record(keyId, at(60));
    expect([one.statements, iso(await lastUsed(keyId))]).toEqual([2, at(60).toISOString()]);
  });

  it("keeps each key's minute apart", async () => {
    const [first, second] = [await newKey(), await newKey()];
    const one = processRecorder();
    await one.record(first, at(0));
    await one.record(second, at(10));
    await one.record(first, at(20));
    expect(one.statements).toBe(2);
    expect([iso(await lastUsed(first)), iso(await lastUsed(second))]).toEqual([
      at(0).toISOString(),
      at(10).toISOString(),
    ]);
  });

  it("leaves a use another process wrote within the minute as it is", async () => {
    const keyId = await newKey();
    const [one, two] = [processRecorder(), processRecorder()];
    await one.record(keyId, at(0));
    // The other process has not written this key yet: it sends its UPDATE, which changes nothing.
    await two.record(keyId, at(40));
    expect([two.statements, iso(await lastUsed(keyId))]).toEqual([1, at(0).toISOString()]);
    // Within a minute of its own attempt it sends nothing; the first process writes again.
    await two.record(keyId, at(61));
    await one.record(keyId, at(61));
    expect([two.statements, one.statements, iso(await lastUsed(keyId))]).toEqual([1, 2, at(61).toISOString()]);
  });

  it("reports a failed write instead of failing the request, and tries again a minute later", async () => {
    const failures: unknown[] = [];
    let statements = 0;
    const down: Queryable = {
      query: async () => {
        statements += 1;
        throw new Error("connection refused");
      },
    };
    const record = keyUseRecorder(down, { onError: (error) => failures.push(error) });
    await record("00000000-0000-4000-8000-000000000000", at(0));
    await record("00000000-0000-4000-8000-000000000000", at(30));
    await record("00000000-0000-4000-8000-000000000000", at(60));
    expect([statements, failures.length]).toEqual([2, 2]);
  });
});
