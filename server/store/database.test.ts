import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { availableEngines, freshDatabase } from "../../testkit/harness.ts";
import type { Database } from "./database.ts";

// Statements of concurrent callers are queued (embedded) or pooled (PostgreSQL); on both engines
// a read sees the last write completed before it.
describe.each(availableEngines())("reads on %s always see the last completed write", (engine) => {
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await freshDatabase(engine));
    await db.exec(
      "CREATE TABLE cache_probe (id int PRIMARY KEY, value text NOT NULL); INSERT INTO cache_probe VALUES (1, 'first')",
    );
  });
  afterAll(() => drop());

  const read = async () =>
    (await db.query<{ value: string }>("SELECT value FROM cache_probe WHERE id = $1", [1]))[0]!.value;

  it("after a write outside a transaction", async () => {
    await db.query("UPDATE cache_probe SET value = 'plain' WHERE id = 1");
    expect(await read()).toBe("plain");
    await db.query("UPDATE cache_probe SET value = 'plain again' WHERE id = 1");
    expect(await read()).toBe("plain again");
  });

  it("after a committed transaction, and not after a rolled-back one", async () => {
    expect(await read()).toBe("plain again");
    await db.transaction((tx) => tx.query("UPDATE cache_probe SET value = 'committed' WHERE id = 1"));
    expect(await read()).toBe("committed");
    await expect(
      db.transaction(async (tx) => {
        await tx.query("UPDATE cache_probe SET value = 'rolled back' WHERE id = 1");
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    expect(await read()).toBe("committed");
  });

  it("when a read is in flight while a write completes", async () => {
    expect(await read()).toBe("committed");
    await db.query("UPDATE cache_probe SET value = 'before' WHERE id = 1");
    const [during] = await Promise.all([
      read(),
      db.transaction((tx) => tx.query("UPDATE cache_probe SET value = 'after' WHERE id = 1")),
    ]);
    expect(["before", "after"]).toContain(during);
    expect(await read()).toBe("after");
  });

  it("gives each caller its own array of rows", async () => {
    const first = await db.query<{ value: string }>("SELECT value FROM cache_probe");
    first.push({ value: "added by a caller" });
    expect(await db.query("SELECT value FROM cache_probe")).toHaveLength(1);
  });
});
