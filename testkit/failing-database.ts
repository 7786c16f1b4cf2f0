import { type Database, DatabaseError, type Queryable } from "../server/store/database.ts";

/**
 * A database whose statements fail on demand, the way a driver failure surfaces (DatabaseError):
 * while `failOn(pattern)` is set, every statement whose text matches it fails; `failOn(null)`
 * restores it. `failOn(pattern, "unexpected")` fails them with a plain Error instead: a fault of
 * the server's own code on that path, which is no database failure. `holdOn(pattern)` makes matching statements wait instead, until `holdOn(null)`: a
 * slow database. Used to reach the answers to a failing database, which no request can cause.
 */
/** How a failing statement fails: as the database's failure, or as an unexpected fault of the code. */
export type FailureKind = "database" | "unexpected";

export function failingDatabase(db: Database): {
  db: Database;
  failOn(statements: RegExp | null, how?: FailureKind): void;
  holdOn(statements: RegExp | null): void;
  /** How many statements `holdOn` keeps waiting now. */
  waiting(): number;
} {
  let failing: RegExp | null = null;
  let failure: FailureKind = "database";
  let holding: RegExp | null = null;
  let held = Promise.resolve();
  let letGo = () => {};
  let waiting = 0;
  const guard = async <T>(sql: string, run: () => Promise<T>): Promise<T> => {
    if (failing?.test(sql))
      throw failure === "database" ? new DatabaseError("injected database failure") : new Error("injected fault");
    while (holding?.test(sql)) {
      waiting++;
      await held;
      waiting--;
    }
    return run();
  };
  const wrap = (queryable: Queryable): Queryable => ({
    query: (sql, params) => guard(sql, () => queryable.query(sql, params)),
  });
  const wrapped: Database = {
    engine: db.engine,
    ...wrap(db),
    transaction: (work) => db.transaction((tx) => work(wrap(tx))),
    exec: (sql) => guard(sql, () => db.exec(sql)),
    close: () => db.close(),
    poolStats: () => db.poolStats(),
  };
  return {
    db: wrapped,
    failOn(statements, how = "database") {
      failing = statements;
      failure = how;
    },
    holdOn(statements) {
      holding = statements;
      if (statements) held = new Promise((resolve) => (letGo = resolve));
      else letGo();
    },
    waiting: () => waiting,
  };
}
