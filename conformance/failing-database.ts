import { type Database, DatabaseError, type Queryable } from "../server/store/database.ts";

/**
 * Statements on the data the API serves. Keys and brands keep working while the fault is on, so
 * a request still authenticates and the failure reaches the endpoint itself, as a real outage of
 * those tables would.
 */
const DATA_TABLES = /\b(streams|webhooks|creators)\b/;

/**
 * A database whose data statements fail on demand, the way a driver failure surfaces
 * (DatabaseError). It is the only way to reach 500 `db_error`, which the contract documents but no
 * request can cause on a healthy server.
 */
export function failingDatabase(db: Database): { db: Database; fail(on: boolean): void } {
  let failing = false;
  const guard = <T>(sql: string, run: () => Promise<T>): Promise<T> =>
    failing && DATA_TABLES.test(sql) ? Promise.reject(new DatabaseError("conformance: injected database failure")) : run();
  const wrap = (queryable: Queryable): Queryable => ({
    query: (sql, params) => guard(sql, () => queryable.query(sql, params)),
  });
  const wrapped: Database = {
    engine: db.engine,
    ...wrap(db),
    transaction: (work) => db.transaction((tx) => work(wrap(tx))),
    exec: (sql) => guard(sql, () => db.exec(sql)),
    close: () => db.close(),
  };
  return {
    db: wrapped,
    fail(on) {
      failing = on;
    },
  };
}
