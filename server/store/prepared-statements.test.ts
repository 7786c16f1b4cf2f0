import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { availableEngines, freshDatabase } from "../../testkit/harness.ts";
import { type Database, DatabaseError, openDatabase, type Queryable } from "./database.ts";
import { byteaArray } from "./request-log.ts";

const sqlState = (error: unknown) => ((error as DatabaseError).cause as { code?: string } | undefined)?.code;

async function failure(run: Promise<unknown>): Promise<DatabaseError> {
  const error = await run.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(DatabaseError);
  return error as DatabaseError;
}

// Both engines run each statement text as a named prepared statement after its first use.
describe.each(availableEngines())("statements prepared once and run many times on %s", (engine) => {
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await freshDatabase(engine));
    await db.exec(`CREATE TABLE prepared_probe (
      id int PRIMARY KEY, label text, at timestamptz, amount bigint, flag boolean, tags text[], doc jsonb
    )`);
  });
  afterAll(() => drop());

  const insert =
    "INSERT INTO prepared_probe (id, label, at, amount, flag, tags, doc) VALUES ($1, $2, $3, $4, $5, $6, $7)";
  const byId = "SELECT id, label, at, amount, flag, tags, doc FROM prepared_probe WHERE id = $1";

  it("sends every parameter type and parses every result type, the first time and afterwards", async () => {
    const at = new Date("2026-11-20T12:34:56.789Z");
    for (const id of [1, 2, 3]) {
      await db.query(insert, [
        id,
        `row ${id}`,
        at,
        9_007_199_254_740_993n,
        id % 2 === 1,
        ["a", "b,c", 'd"e'],
        JSON.stringify({ id }),
      ]);
    }
    await db.query(insert, [4, null, null, null, null, null, null]);
    for (const id of [1, 2, 3]) {
      const [row] = await db.query<Record<string, unknown>>(byId, [id]);
      expect(row).toEqual({
        id,
        label: `row ${id}`,
        at,
        amount: expect.anything(),
        flag: id % 2 === 1,
        tags: ["a", "b,c", 'd"e'],
        doc: { id },
      });
      expect(String(row!.amount)).toBe("9007199254740993");
    }
    expect(await db.query(byId, [4])).toEqual([
      { id: 4, label: null, at: null, amount: null, flag: null, tags: null, doc: null },
    ]);
    expect(await db.query(byId, [99])).toEqual([]);
  });

  it("sends bytes as they are, in binary: a bytea, and an array in PostgreSQL's binary format", async () => {
    const bytes = Buffer.from([0, 1, 2, 0xff, 0x5c, 0x22]);
    const [one] = await db.query<{ stored: Uint8Array }>("SELECT $1::bytea AS stored", [bytes]);
    expect(Buffer.from(one!.stored)).toEqual(bytes);
    const rows = await db.query<{ b: Uint8Array | null }>("SELECT b FROM unnest($1::bytea[]) AS b", [
      byteaArray([bytes, null, Buffer.alloc(0)]),
    ]);
    expect(rows.map((row) => (row.b === null ? null : [...row.b]))).toEqual([[...bytes], null, []]);
  });

  it("keeps the error's SQLSTATE, and the next statement runs as usual", async () => {
    const duplicate = await failure(db.query(insert, [1, "again", null, null, null, null, null]));
    expect(sqlState(duplicate)).toBe("23505");
    await db.query(insert, [5, "after the error", null, null, null, null, null]);
    expect((await db.query<{ label: string }>(byId, [5]))[0]!.label).toBe("after the error");
  });

  it("rolls back a transaction whose prepared statement failed, and runs the next transaction", async () => {
    const failed = await failure(
      db.transaction(async (tx) => {
        await tx.query(insert, [6, "rolled back", null, null, null, null, null]);
        await tx.query(insert, [1, "duplicate", null, null, null, null, null]);
      }),
    );
    expect(sqlState(failed)).toBe("23505");
    expect(await db.query(byId, [6])).toEqual([]);
    await db.transaction((tx) => tx.query(insert, [6, "committed", null, null, null, null, null]));
    expect((await db.query<{ label: string }>(byId, [6]))[0]!.label).toBe("committed");
  });

  it("runs the statements a transaction starts at once one after another, each with its own answer", async () => {
    const answers = await db.transaction((tx) =>
      Promise.all([
        tx.query("SELECT 1 AS a"),
        tx.query(byId, [5]),
        tx.query("SHOW DateStyle"),
        tx.query("SELECT 'x' AS c"),
      ]),
    );
    expect(answers).toEqual([
      [{ a: 1 }],
      [expect.objectContaining({ id: 5, label: "after the error" })],
      [{ DateStyle: expect.any(String) }],
      [{ c: "x" }],
    ]);
  });

  it("refuses a transaction's handle once the transaction has ended", async () => {
    let kept: Queryable | undefined;
    await db.transaction(async (tx) => {
      kept = tx;
      await tx.query(byId, [5]);
    });
    await expect(kept!.query("UPDATE prepared_probe SET label = 'late' WHERE id = $1", [5])).rejects.toThrow(
      "Transaction is closed",
    );
    expect((await db.query<{ label: string }>(byId, [5]))[0]!.label).toBe("after the error");
  });

  it("refuses a statement that does not parse each time it is sent, without keeping it", async () => {
    for (let attempt = 0; attempt < 2; attempt++) {
      expect(sqlState(await failure(db.query("SELECT id FROM prepared_probe WHERE", [])))).toBe("42601");
      expect(sqlState(await failure(db.query("SELECT id FROM no_such_table WHERE id = $1", [1])))).toBe("42P01");
    }
    expect(await db.query("SELECT count(*)::int AS n FROM prepared_probe")).toEqual([{ n: 6 }]);
  });

  it("runs more distinct statements than it keeps prepared", async () => {
    for (let n = 0; n < 520; n++) {
      const [row] = await db.query<{ n: number }>(`SELECT $1::int + ${n} AS n`, [1]);
      expect(row!.n).toBe(n + 1);
    }
    expect((await db.query<{ label: string }>(byId, [5]))[0]!.label).toBe("after the error");
  });
});

// A rolling upgrade: another process's migration adds a column to a table this one reads with `*`,
// on connections where the statement is already prepared.
describe.skipIf(!availableEngines().includes("postgres"))("a column added by another process on PostgreSQL", () => {
  let db: Database;
  let other: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    let url: string;
    ({ db, url, drop } = await freshDatabase("postgres"));
    other = await openDatabase(url);
    await db.exec("CREATE TABLE added_probe (id int PRIMARY KEY); INSERT INTO added_probe VALUES (1)");
  });
  afterAll(async () => {
    await other.close();
    await drop();
  });

  it("runs a prepared `SELECT *` and `RETURNING *` again, reads and writes, in and out of transactions", async () => {
    const everything = "SELECT * FROM added_probe WHERE id = $1";
    const update = "UPDATE added_probe SET id = id WHERE id = $1 RETURNING *";
    // Prepared on several of the pool's connections at once.
    await Promise.all(Array.from({ length: 4 }, () => db.query(everything, [1])));
    await Promise.all(Array.from({ length: 4 }, () => db.transaction((tx) => tx.query(update, [1]))));
    await other.exec("ALTER TABLE added_probe ADD COLUMN note text NOT NULL DEFAULT 'added'");
    const reads = await Promise.all(Array.from({ length: 4 }, () => db.query(everything, [1])));
    expect(reads).toEqual(Array.from({ length: 4 }, () => [{ id: 1, note: "added" }]));
    const writes = await Promise.all(Array.from({ length: 4 }, () => db.transaction((tx) => tx.query(update, [1]))));
    expect(writes).toEqual(Array.from({ length: 4 }, () => [{ id: 1, note: "added" }]));
    expect(await db.query(update, [1])).toEqual([{ id: 1, note: "added" }]);
  });
});

describe("a schema change on the embedded database", () => {
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await freshDatabase("pglite"));
    await db.exec("CREATE TABLE schema_probe (id int PRIMARY KEY); INSERT INTO schema_probe VALUES (1)");
  });
  afterAll(() => drop());

  it("prepares a statement again, so `SELECT *` sees a column added since", async () => {
    const everything = "SELECT * FROM schema_probe WHERE id = $1";
    expect(await db.query(everything, [1])).toEqual([{ id: 1 }]);
    await db.exec("ALTER TABLE schema_probe ADD COLUMN note text NOT NULL DEFAULT 'added'");
    expect(await db.query(everything, [1])).toEqual([{ id: 1, note: "added" }]);
    await db.query("ALTER TABLE schema_probe DROP COLUMN note");
    expect(await db.query(everything, [1])).toEqual([{ id: 1 }]);
  });

  it("prepares a statement again after a schema change inside the same transaction (as a migration makes)", async () => {
    const everything = "SELECT * FROM schema_probe WHERE id = $1";
    const rows = await db.transaction(async (tx) => {
      const before = await tx.query(everything, [1]);
      await tx.query("ALTER TABLE schema_probe ADD COLUMN later int NOT NULL DEFAULT 7");
      return [before, await tx.query(everything, [1])];
    });
    expect(rows).toEqual([[{ id: 1 }], [{ id: 1, later: 7 }]]);
  });

  it("says the database is closed when it is", async () => {
    const { db: closing } = await freshDatabase("pglite");
    await closing.query("SELECT 1 AS one");
    await closing.close();
    await expect(closing.query("SELECT 1 AS one")).rejects.toThrow("PGlite is closed");
  });
});
