import type { Database } from "../server/store/database.ts";
import { type FailureKind, failingDatabase as failingOn } from "../testkit/failing-database.ts";

/**
 * Statements on the data the API serves. Keys and brands keep working while the fault is on, so
 * a request still authenticates and the failure reaches the endpoint itself, as a real outage of
 * those tables would.
 */
const DATA_TABLES = /\b(streams|webhooks|creators|webhook_events|webhook_deliveries|request_log|test_clocks)\b/;

/**
 * A database whose data statements fail on demand, the way a driver failure surfaces
 * (DatabaseError), or as a fault of the server's own code would (`"unexpected"`). It is the only
 * way to reach 500 `db_error` and `internal_error`, which the contract documents but no request can
 * cause on a healthy server.
 */
export function failingDatabase(db: Database): { db: Database; fail(on: boolean, how?: FailureKind): void } {
  const database = failingOn(db);
  return { db: database.db, fail: (on, how) => database.failOn(on ? DATA_TABLES : null, how) };
}
