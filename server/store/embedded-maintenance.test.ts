import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase } from "../../testkit/harness.ts";
import type { Database } from "./database.ts";

describe("the embedded database's own autovacuum", () => {
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await freshDatabase("pglite"));
    await db.exec(
      "CREATE TABLE churn (id int PRIMARY KEY, status text NOT NULL); CREATE INDEX churn_status ON churn (status)",
    );
  });
  afterAll(() => drop());

  const stats = async () => {
    // The session's counters reach the statistics views when flushed.
    await db.query("SELECT pg_stat_force_next_flush()");
    return (
      await db.query<{ dead: number; analyzed: boolean; vacuumed: boolean; estimate: number }>(
        `SELECT n_dead_tup::int AS dead, last_analyze IS NOT NULL AS analyzed, last_vacuum IS NOT NULL AS vacuumed,
                (SELECT reltuples::int FROM pg_class WHERE relname = 'churn') AS estimate
         FROM pg_stat_user_tables WHERE relname = 'churn'`,
        [],
      )
    )[0]!;
  };

  it("vacuums and analyzes a table past autovacuum's thresholds, and leaves it alone once done", async () => {
    await db.query("INSERT INTO churn SELECT n, 'preparing' FROM generate_series(1, 2000) n");
    for (const status of ["live", "ended"]) await db.query("UPDATE churn SET status = $1", [status]);
    const before = await stats();
    expect(before.dead).toBeGreaterThanOrEqual(4000);
    expect(before).toMatchObject({ analyzed: false, vacuumed: false });
    const cached = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM churn WHERE status = $1", ["ended"]);

    expect(await db.maintain!()).toContain('VACUUM (ANALYZE) public."churn"');
    const after = await stats();
    expect(after).toMatchObject({ dead: 0, analyzed: true, vacuumed: true, estimate: 2000 });
    expect(await db.maintain!()).not.toContain('VACUUM (ANALYZE) public."churn"');
    // Maintenance changes no answer: the same read, and a fresh one, agree.
    expect(await db.query("SELECT count(*)::int AS n FROM churn WHERE status = $1", ["ended"])).toEqual(cached);
    expect(await db.query("SELECT count(*)::int AS n FROM churn WHERE status = $1", ["ended"])).toEqual([{ n: 2000 }]);
  });

  it("analyzes a table whose rows changed without leaving dead ones", async () => {
    await db.query("INSERT INTO churn SELECT n, 'live' FROM generate_series(2001, 3000) n");
    const ran = await db.maintain!();
    expect(ran).toContain('ANALYZE public."churn"');
    expect((await stats()).estimate).toBe(3000);
  });
});
