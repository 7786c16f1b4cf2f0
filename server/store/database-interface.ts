/**
 * The database as the rest of the server sees it, on either engine; implemented by
 * embedded-database.ts and postgres-database.ts, opened by database.ts.
 */
/** What a query needs: both a database and an open transaction satisfy it. */
export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
}

export interface Database extends Queryable {
  readonly engine: "pglite" | "postgres";
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Runs a script of several statements (migrations). */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
  /** For the readiness probe: on PostgreSQL a connection of its own, so a saturated pool does not fail it (absent: the database itself). */
  readonly probe?: Queryable;
  /**
   * PostgreSQL only: the database time each request gets, from its arrival (one statement time-out
   * plus the grace; store/request-budget.ts). The embedded database runs one statement at a time
   * in the process and has none.
   */
  readonly requestTimeBudgetMs?: number;
  /** How busy its connections are, for the metrics. */
  poolStats(): PoolStats;
  /**
   * The embedded database only (it has no autovacuum): vacuums and analyzes the tables past
   * autovacuum's thresholds, as it does by itself every minute. Returns the statements it ran.
   */
  maintain?(): Promise<string[]>;
  /**
   * The embedded database in a data directory only: a consistent copy of that directory, taken
   * while requests wait (server/backup/take.ts streams it to the operator, then discards it).
   */
  snapshot?(): Promise<Snapshot>;
  /** Without `snapshot`: why this database takes none, and how to back it up instead. */
  readonly noSnapshotReason?: string;
}

/** A copy of the embedded database's directory, as it was between two statements. */
export interface Snapshot {
  /** The copy, inside the data directory (same disk); removed by discard(). */
  dir: string;
  /** The migrations the database had applied then, and which of them were contracting. */
  migrations: string[];
  contracting: string[];
  discard(): Promise<void>;
}

/** Connections open and idle, and queries waiting for one (PGlite: one connection, statements queued behind it). */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}
