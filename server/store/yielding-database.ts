import { setImmediate as nextTurn } from "node:timers/promises";
import type { Database, Queryable } from "./database.ts";

/**
 * The embedded database runs each statement on this thread and resolves without letting the event
 * loop turn, so in the in-process server a request's statements run back to back and requests
 * arriving together are answered one after the other. A deployment on a networked database
 * interleaves them. This wrapper lets the loop turn before each statement, so concurrent requests
 * meet as they would there (an Idempotency-Key still in use, for one): the dynamic mock
 * (mock/dynamic.ts) and the conformance suite's in-process server run on it.
 */
export function yieldingDatabase(db: Database): Database {
  const wrap = (queryable: Queryable): Queryable => ({
    async query(sql, params) {
      await nextTurn();
      return queryable.query(sql, params);
    },
  });
  return {
    engine: db.engine,
    ...wrap(db),
    transaction: (work) => db.transaction((tx) => work(wrap(tx))),
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
    poolStats: () => db.poolStats(),
  };
}
