import { describe, expect, it } from "vitest";
import { bigint, emptyRecord, int, table, text, time } from "../domain/table.ts";
import { assignments, insertRow, named, readRow, selectList, updateRows } from "./statements.ts";

const THINGS = table("things", {
  id: text(),
  ownerId: text(),
  totalCents: bigint(),
  count: int().defaulted(),
  secretHash: text().writeOnly(),
  ownerName: text().nullable().computed(),
  createdAt: time(),
  endedAt: time().nullable(),
});

describe("statements from a table's declaration", () => {
  it("reads a row into the record: snake_case columns, bigint as a number, a jsonb timestamp as a Date", () => {
    const row = {
      id: "t1",
      owner_id: "o1",
      total_cents: "9007199254740991",
      count: 2,
      secret_hash: "never read",
      owner_name: null,
      created_at: "2026-11-20T12:00:00.000Z",
      ended_at: null,
    };
    expect(readRow(THINGS, row)).toEqual({
      id: "t1",
      ownerId: "o1",
      totalCents: 9007199254740991,
      count: 2,
      ownerName: null,
      createdAt: new Date("2026-11-20T12:00:00.000Z"),
      endedAt: null,
    });
  });

  it("lists the readable columns, a computed one as its expression, prefixed when asked", () => {
    expect(selectList(THINGS, { alias: "t", computed: { ownerName: "o.name" } })).toBe(
      "t.id, t.owner_id, t.total_cents, t.count, o.name AS owner_name, t.created_at, t.ended_at",
    );
    expect(() => selectList(THINGS)).toThrow(/ownerName is computed/);
    expect(selectList(THINGS, { alias: "t", prefix: "t_", computed: { ownerName: "o.name" } })).toContain(
      "t.owner_id AS t_owner_id",
    );
  });

  it("inserts the given fields in declaration order, leaving a defaulted one out when not given", () => {
    const createdAt = new Date(0);
    const insert = insertRow(
      THINGS,
      { id: "t1", ownerId: "o1", totalCents: 5, secretHash: "h", createdAt, endedAt: null },
      "RETURNING id",
    );
    expect(insert.text).toBe(
      "INSERT INTO things (id, owner_id, total_cents, secret_hash, created_at, ended_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
    );
    expect(insert.params).toEqual(["t1", "o1", 5, "h", createdAt, null]);
  });

  it("updates the patch's fields of the rows matching the key, numbering the key first", () => {
    const update = updateRows(THINGS, { id: "t1" }, { endedAt: null, count: 3 });
    expect(update).toEqual({
      text: "UPDATE things SET count = $2, ended_at = $3 WHERE id = $1",
      params: ["t1", 3, null],
    });
    expect(updateRows(THINGS, { id: "t1" }, {})).toBeNull();
    expect(assignments(THINGS, { count: 1, endedAt: null }, 4).at("endedAt")).toBe("$5");
  });

  it("numbers named parameters once each, leaving casts and positional ones alone", () => {
    const statement = named<{ now: Date; limit: number }>(
      "SELECT $now::timestamptz, $limit, $now, $7, '$9' FROM t WHERE a < $now::timestamptz LIMIT $limit",
    );
    expect(statement.text).toBe("SELECT $1::timestamptz, $2, $1, $7, '$9' FROM t WHERE a < $1::timestamptz LIMIT $2");
    const now = new Date();
    expect(statement.params({ now, limit: 3 })).toEqual([now, 3]);
    expect(() => statement.params({ now } as { now: Date; limit: number })).toThrow("No value for $limit");
  });

  it("makes an empty record of every readable field, for tests to name only the fields they are about", () => {
    const record = emptyRecord(THINGS);
    expect(record).toEqual({
      id: "",
      ownerId: "",
      totalCents: 0,
      count: 0,
      ownerName: null,
      createdAt: new Date(0),
      endedAt: null,
    });
    expect("secretHash" in record).toBe(false);
  });
});
