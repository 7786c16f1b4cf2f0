import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { availableEngines, freshDatabase } from "../testing/harness.ts";
import { type Database, READ_CACHE_ROWS } from "./database.ts";

// The embedded database caches reads until the next write; these hold on both engines.
describe.each(availableEngines())("reads on %s always see the last completed write", (engine) => {
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await freshDatabase(engine));
    await db.exec("CREATE TABLE cache_probe (id int PRIMARY KEY, value text NOT NULL); INSERT INTO cache_probe VALUES (1, 'first')");
  });
  afterAll(() => drop());

  const read = async () => (await db.query<{ value: string }>("SELECT value FROM cache_probe WHERE id = $1", [1]))[0]!.value;

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
    const [during] = await Promise.all([read(), db.transaction((tx) => tx.query("UPDATE cache_probe SET value = 'after' WHERE id = 1"))]);
    expect(["before", "after"]).toContain(during);
    expect(await read()).toBe("after");
  });

  it("gives each caller its own array of rows", async () => {
    const first = await db.query<{ value: string }>("SELECT value FROM cache_probe");
    first.push({ value: "added by a caller" });
    expect(await db.query("SELECT value FROM cache_probe")).toHaveLength(1);
  });
});

// A write forgets the cached reads of what it may have changed, including through triggers,
// cascading foreign keys and functions (store/table-dependencies.ts); these hold on both engines.
describe.each(availableEngines())("reads on %s see changes made through triggers, foreign keys and functions", (engine) => {
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await freshDatabase(engine));
    await db.exec(`
      CREATE TABLE probe_parents (id int PRIMARY KEY);
      CREATE TABLE probe_children (id int PRIMARY KEY, parent_id int NOT NULL REFERENCES probe_parents ON DELETE CASCADE);
      CREATE TABLE probe_totals (total int NOT NULL);
      INSERT INTO probe_totals VALUES (0);
      CREATE FUNCTION probe_add(delta int) RETURNS void LANGUAGE sql AS 'UPDATE probe_totals SET total = total + delta';
      CREATE FUNCTION probe_counted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM probe_add(1); RETURN NEW; END $$;
      CREATE TRIGGER probe_counted AFTER INSERT ON probe_children FOR EACH ROW EXECUTE FUNCTION probe_counted();
      INSERT INTO probe_parents VALUES (1);
    `);
  });
  afterAll(() => drop());

  const total = async () => (await db.query<{ total: number }>("SELECT total FROM probe_totals"))[0]!.total;
  const children = async () => (await db.query<{ id: number }>("SELECT id FROM probe_children ORDER BY id")).map((row) => row.id);

  it("a trigger that calls a function writing another table", async () => {
    expect(await total()).toBe(0);
    await db.query("INSERT INTO probe_children VALUES (1, 1)");
    expect(await total()).toBe(1);
    await db.transaction((tx) => tx.query("INSERT INTO probe_children VALUES (2, 1)"));
    expect(await total()).toBe(2);
  });

  it("a delete cascading to the referencing table", async () => {
    expect(await children()).toEqual([1, 2]);
    await db.query("DELETE FROM probe_parents WHERE id = 1");
    expect(await children()).toEqual([]);
  });

  it("a function called by the statement", async () => {
    const before = await total();
    await db.query("WITH bumped AS (SELECT probe_add(10)) SELECT 1 FROM bumped");
    expect(await total()).toBe(before + 10);
  });

  it("a trigger whose function is not the schema's own", async () => {
    await db.exec(`CREATE TABLE probe_plain (v int); INSERT INTO probe_plain VALUES (1);
      CREATE TRIGGER probe_plain_same BEFORE UPDATE ON probe_plain FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger()`);
    const value = async () => (await db.query<{ v: number }>("SELECT v FROM probe_plain"))[0]!.v;
    // Several writes, so the later ones run with the dependency model loaded.
    for (const next of [2, 3, 4]) {
      expect(await value()).toBe(next - 1);
      await db.query("UPDATE probe_plain SET v = $1", [next]);
      expect(await value()).toBe(next);
    }
  });

  it("a rule that writes another table", async () => {
    await db.exec("CREATE RULE probe_rule AS ON INSERT TO probe_parents DO ALSO UPDATE probe_totals SET total = total + 100");
    for (const id of [20, 21, 22]) {
      const before = await total();
      await db.query("INSERT INTO probe_parents (id) VALUES ($1)", [id]);
      expect(await total()).toBe(before + 100);
    }
    await db.exec("DROP RULE probe_rule ON probe_parents; DELETE FROM probe_parents WHERE id >= 20");
  });

  it("schema changes", async () => {
    await db.query("SELECT count(*) FROM probe_parents");
    await db.exec("ALTER TABLE probe_parents ADD COLUMN label text DEFAULT 'new'");
    expect(await db.query("SELECT * FROM probe_parents")).toEqual([]);
    await db.query("INSERT INTO probe_parents (id) VALUES (7)");
    expect(await db.query("SELECT id, label FROM probe_parents")).toEqual([{ id: 7, label: "new" }]);
  });
});

describe("the embedded database's read cache", () => {
  it("keeps a read across writes that cannot change what it read", async () => {
    const { db, drop } = await freshDatabase("pglite");
    try {
      await db.exec("CREATE SEQUENCE probe_reads; CREATE TABLE probe_kept (id int); CREATE TABLE probe_other (id int); INSERT INTO probe_kept VALUES (1)");
      // nextval makes each execution visible: a cached answer repeats the number.
      const read = async () => (await db.query<{ n: string }>("SELECT nextval('probe_reads') AS n FROM probe_kept"))[0]!.n;
      const first = await read();
      expect(await read()).toBe(first);
      await db.query("INSERT INTO probe_other VALUES (1)");
      // The catalogue is read in the background after the first write: wait for it, then write again.
      await db.query("SELECT 1 FROM probe_other");
      await db.query("INSERT INTO probe_other VALUES (2)");
      const kept = await read();
      await db.query("INSERT INTO probe_other VALUES (3)");
      expect(await read()).toBe(kept);
      // A write that only reads the table, and a row lock, change nothing in it.
      await db.query("INSERT INTO probe_other SELECT id + 10 FROM probe_kept");
      await db.transaction((tx) => tx.query("SELECT id FROM probe_kept FOR UPDATE"));
      expect(await read()).toBe(kept);
      await db.query("INSERT INTO probe_kept VALUES (2)");
      expect(await read()).not.toBe(kept);
    } finally {
      await drop();
    }
  });
  it("holds at most READ_CACHE_ROWS rows: a larger read is not kept, and past the bound it starts afresh", async () => {
    const { db, drop } = await freshDatabase("pglite");
    try {
      await db.exec("CREATE SEQUENCE probe_rows");
      // nextval makes each execution visible: a cached answer repeats the numbers.
      const read = async (rows: number) => (await db.query<{ n: string }>("SELECT nextval('probe_rows') AS n FROM generate_series(1, $1::int)", [rows]))[0]!.n;
      const small = await read(1);
      expect(await read(1)).toBe(small);
      const tooLarge = await read(READ_CACHE_ROWS + 1);
      expect(await read(READ_CACHE_ROWS + 1)).not.toBe(tooLarge);
      expect(await read(1)).toBe(small);
      const half = await read(READ_CACHE_ROWS / 2);
      expect(await read(READ_CACHE_ROWS / 2)).toBe(half);
      expect(await read(1)).toBe(small);
      // Another half and one row more than the bound: the cache starts afresh, the small read with it.
      await read(READ_CACHE_ROWS / 2 + 1);
      expect(await read(1)).not.toBe(small);
    } finally {
      await drop();
    }
  });
});
