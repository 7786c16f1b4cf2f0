import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { availableEngines, freshDatabase } from "../testing/harness.ts";
import { type Database, DatabaseError } from "./database.ts";

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

  const insert = "INSERT INTO prepared_probe (id, label, at, amount, flag, tags, doc) VALUES ($1, $2, $3, $4, $5, $6, $7)";
  const byId = "SELECT id, label, at, amount, flag, tags, doc FROM prepared_probe WHERE id = $1";

  it("sends every parameter type and parses every result type, the first time and afterwards", async () => {
    const at = new Date("2026-11-20T12:34:56.789Z");
    for (const id of [1, 2, 3]) {
      await db.query(insert, [id, `row ${id}`, at, 9_007_199_254_740_993n, id % 2 === 1, ["a", "b,c", 'd"e'], JSON.stringify({ id })]);
    }
    await db.query(insert, [4, null, null, null, null, null, null]);
    for (const id of [1, 2, 3]) {
      const [row] = await db.query<Record<string, unknown>>(byId, [id]);
      expect(row).toEqual({ id, label: `row ${id}`, at, amount: expect.anything(), flag: id % 2 === 1, tags: ["a", "b,c", 'd"e'], doc: { id } });
      expect(String(row!.amount)).toBe("9007199254740993");
    }
    expect(await db.query(byId, [4])).toEqual([{ id: 4, label: null, at: null, amount: null, flag: null, tags: null, doc: null }]);
    expect(await db.query(byId, [99])).toEqual([]);
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
});
