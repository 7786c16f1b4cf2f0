import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { FLUSH_STATISTICS, MAINTENANCE_INTERVAL_MS, maintenanceStatement, type TableDue, TABLES_DUE } from "./embedded-maintenance.ts";
import { isRowStatement, PreparedStatements, type Unprepared } from "./pglite-statements.ts";
import { type DataDirLock, DataDirLockedError, HOLDER_FILE, LOCK_FILE, lockDataDir } from "./data-dir-lock.ts";
import { embeddedOptions } from "./embedded-settings.ts";
import { copyTemplate } from "./embedded-template.ts";

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
  /** How busy its connections are, for the metrics. */
  poolStats(): PoolStats;
  /**
   * The embedded database only (it has no autovacuum): vacuums and analyzes the tables past
   * autovacuum's thresholds, as it does by itself every minute. Returns the statements it ran.
   */
  maintain?(): Promise<string[]>;
}

/** Connections open and idle, and queries waiting for one (PGlite: one connection, statements queued behind it). */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/** Raised for any failure of the database itself; the HTTP layer answers 500 db_error. */
export class DatabaseError extends Error {
  override name = "DatabaseError";
  override readonly cause?: unknown;
  constructor(message: string, cause?: unknown) {
    super(message);
    this.cause = cause;
  }
}

/**
 * The embedded database's directory cannot be used: `problem` says why, naming no setting;
 * `holdsDatabase` tells a database that cannot be opened from a directory that is no place for one.
 */
export class DataDirError extends Error {
  override name = "DataDirError";
  readonly dir: string;
  readonly problem: string;
  readonly holdsDatabase: boolean;
  override readonly cause?: unknown;
  constructor(dir: string, problem: string, holdsDatabase: boolean, cause?: unknown) {
    super(`${dir} ${problem}`);
    this.dir = dir;
    this.problem = problem;
    this.holdsDatabase = holdsDatabase;
    this.cause = cause;
  }
}

/** Driver failures become DatabaseError; errors thrown by our own code inside a transaction keep their type. */
async function driver<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw new DatabaseError(errorMessage(error), error);
  }
}

/** Statement texts prepared by name at most, on either engine; past it, statements run unnamed (parsed each time). */
const PREPARED_STATEMENTS = 500;

/**
 * PGlite is a single connection, so statements from concurrent requests would interleave inside
 * another request's transaction. A promise chain serialises every query and transaction.
 */
class EmbeddedDatabase implements Database {
  readonly engine = "pglite" as const;
  #tail: Promise<unknown> = Promise.resolve();
  /** Statements and transactions started and not yet settled: the one running and those queued. */
  #pending = 0;
  readonly #settled = (): void => {
    this.#pending -= 1;
  };

  readonly #statements: PreparedStatements;
  readonly #unprepared: Unprepared = async <Row>(sql: string, params: unknown[]) => (await this.db.query<Row>(sql, params)).rows;

  private readonly db: PGlite;
  private readonly lock: DataDirLock | null;

  constructor(db: PGlite, lock: DataDirLock | null) {
    this.db = db;
    this.lock = lock;
    this.#statements = new PreparedStatements(db, PREPARED_STATEMENTS);
    this.#maintenance = setInterval(() => void this.maintain().catch(() => undefined), MAINTENANCE_INTERVAL_MS).unref();
  }

  readonly #maintenance: NodeJS.Timeout;

  /**
   * Each table's VACUUM or ANALYZE waits its turn in the queue like any statement, so requests
   * wait for at most one table at a time. Neither changes what a query returns: prepared
   * statements stay (a plan whose statistics changed is re-planned by the engine).
   */
  async maintain(): Promise<string[]> {
    if (this.#maintaining) return [];
    this.#maintaining = true;
    try {
      return await this.#maintainTables();
    } finally {
      this.#maintaining = false;
    }
  }

  #maintaining = false;

  async #maintainTables(): Promise<string[]> {
    const due = await this.#exclusive(async () => {
      // The counters of the last second are still the session's own until flushed.
      await this.#run(FLUSH_STATISTICS, []);
      return this.#run<TableDue>(TABLES_DUE, []);
    });
    const ran: string[] = [];
    for (const table of due) {
      const statement = maintenanceStatement(table);
      await this.#exclusive(() => driver(async () => void (await this.db.exec(statement))));
      ran.push(statement);
    }
    return ran;
  }

  /** One statement outside a transaction; the caller holds the queue (#exclusive). */
  #run<Row>(sql: string, params: unknown[]): Promise<Row[]> {
    return driver(() => this.#statements.query<Row>(sql, params, this.#unprepared));
  }

  #exclusive<T>(run: () => Promise<T>): Promise<T> {
    this.#pending += 1;
    const result = this.#tail.then(run, run);
    this.#tail = result.then(this.#settled, this.#settled);
    return result;
  }

  poolStats(): PoolStats {
    return { total: 1, idle: this.#pending === 0 ? 1 : 0, waiting: Math.max(0, this.#pending - 1) };
  }

  query<Row>(sql: string, params: unknown[] = []): Promise<Row[]> {
    return this.#exclusive(() => this.#run<Row>(sql, params)).finally(() => this.#afterStatement(sql));
  }

  /** A statement that is not on rows (DDL, a setting) may have changed what a prepared statement describes. */
  #afterStatement(sql: string): void {
    if (!isRowStatement(sql)) this.#statements.forget();
  }

  async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.#exclusive(() =>
      this.db.transaction(async (tx) => {
        const unprepared: Unprepared = async <R>(text: string, values: unknown[]) => (await tx.query<R>(text, values)).rows;
        // The transaction's statements run one after another, even when its work starts several
        // at once: a prepared statement does not wait for PGlite's query lock, as tx.query did.
        let last: Promise<unknown> = Promise.resolve();
        let ended = false;
        const run = async <Row>(sql: string, params: unknown[]): Promise<Row[]> => {
          // A handle kept past its transaction would run outside the queue.
          if (ended) throw new Error("Transaction is closed");
          try {
            return await this.#statements.query<Row>(sql, params, unprepared);
          } finally {
            this.#afterStatement(sql);
          }
        };
        try {
          return await work({
            query: <Row>(sql: string, params: unknown[] = []) => {
              const result = last.then(() => driver(() => run<Row>(sql, params)));
              last = result.catch(() => undefined);
              return result;
            },
          });
        } finally {
          ended = true;
        }
      }),
    );
  }

  async exec(sql: string): Promise<void> {
    try {
      await this.#exclusive(() => driver(async () => void (await this.db.exec(sql))));
    } finally {
      // A script (migrations) may change the schema.
      this.#statements.forget();
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#maintenance);
    await this.#exclusive(() => this.db.close());
    this.lock?.release();
  }
}

/** Bounded waits on PostgreSQL, so a database that hangs or goes away never holds a request for long. */
export interface PostgresSettings {
  /** Connections per process. */
  poolMax: number;
  /** Longest wait for a connection: a free one from the pool, or a new one being opened. */
  acquireTimeoutMs: number;
  /** PostgreSQL cancels a statement running longer (`statement_timeout`). */
  statementTimeoutMs: number;
  /** PostgreSQL ends a session idle inside a transaction longer (`idle_in_transaction_session_timeout`). */
  idleInTransactionTimeoutMs: number;
  /** How long the readiness probe waits, on a connection of its own. */
  probeTimeoutMs: number;
}

export const POSTGRES_DEFAULTS: PostgresSettings = {
  poolMax: 10,
  acquireTimeoutMs: 5_000,
  statementTimeoutMs: 10_000,
  idleInTransactionTimeoutMs: 30_000,
  probeTimeoutMs: 2_000,
};

/**
 * The client gives up on an answer this long after the statement time-out: a live server has
 * cancelled the statement by then, so only a server that stopped answering gets here.
 */
const ANSWER_GRACE_MS = 1_000;

/** Tries on connections found lost before giving up: after a restart, the pool's idle ones all are. */
const STALE_CONNECTION_ATTEMPTS = 3;

/**
 * A statement that only reads, so running it again after its connection was lost does nothing
 * twice. Our reads call no writing function; a read that did would have to be written as a CTE.
 */
const RETRYABLE_READ = /^\s*SELECT\b/i;

/** SQLSTATEs of a session the server ended: admin_shutdown, crash_shutdown, cannot_connect_now. */
const SESSION_ENDED = new Set(["57P01", "57P02", "57P03"]);

/**
 * The connection was lost (a terminated backend, a restart, a reset socket) rather than a statement
 * refused: nothing of a read was done, so a read may run again on another connection.
 */
function connectionLost(error: unknown): boolean {
  const { code, message = "" } = (error ?? {}) as { code?: string; message?: string };
  if (code !== undefined && (SESSION_ENDED.has(code) || code.startsWith("08") || code === "ECONNRESET" || code === "EPIPE")) return true;
  return /^Connection terminated|not queryable/.test(message);
}

class PostgresDatabase implements Database {
  readonly engine = "postgres" as const;
  #names = new Map<string, string>();
  readonly #pool: pg.Pool;
  /** The readiness probe's own connection: a saturated pool must not fail every probe. */
  readonly #probePool: pg.Pool;
  readonly probe: Queryable;

  constructor(url: string, settings: PostgresSettings) {
    const answerTimeoutMs = settings.statementTimeoutMs + ANSWER_GRACE_MS;
    this.#pool = newPool(url, {
      max: settings.poolMax,
      connectionTimeoutMillis: settings.acquireTimeoutMs,
      statement_timeout: settings.statementTimeoutMs,
      idle_in_transaction_session_timeout: settings.idleInTransactionTimeoutMs,
      query_timeout: answerTimeoutMs,
    });
    this.#probePool = newPool(url, {
      max: 1,
      connectionTimeoutMillis: settings.probeTimeoutMs,
      statement_timeout: settings.probeTimeoutMs,
      query_timeout: settings.probeTimeoutMs,
    });
    const probePool = this.#probePool;
    this.probe = { query: <Row>(sql: string, params: unknown[] = []) => driver(async () => (await probePool.query(sql, params)).rows as Row[]) };
  }

  /**
   * Each statement text gets a name, so every pooled connection parses and plans it once and
   * then only binds and executes it. Values are always parameters, so the texts are few. (A
   * prepared `SELECT *` fails once a migration changes its table's columns: restart the servers
   * after such a migration, as after any schema change.)
   */
  #statement(text: string, values: unknown[]): pg.QueryConfig {
    let name = this.#names.get(text);
    if (name === undefined && this.#names.size < PREPARED_STATEMENTS) {
      name = `s${createHash("sha256").update(text).digest("hex").slice(0, 24)}`;
      this.#names.set(text, name);
    }
    return name === undefined ? { text, values } : { name, text, values };
  }

  async query<Row>(sql: string, params: unknown[] = []): Promise<Row[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.#pool.query(this.#statement(sql, params))).rows as Row[];
      } catch (error) {
        // A read that met a connection lost under it (one the pool had not yet seen fail: after a
        // restart, every idle one) runs again on another; a write may have been done, so it does not.
        if (attempt === STALE_CONNECTION_ATTEMPTS || !connectionLost(error) || !RETRYABLE_READ.test(sql)) throw new DatabaseError(errorMessage(error), error);
      }
    }
  }

  async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const held = await this.#begin();
    const { client } = held;
    let discard = false;
    try {
      let ended = false;
      const result = await work({
        query: <Row>(sql: string, params: unknown[] = []) => {
          // A handle kept past its transaction would run on a connection back in the pool.
          if (ended) return Promise.reject(new DatabaseError("Transaction is closed"));
          return driver(async () => (await client.query(this.#statement(sql, params))).rows as Row[]);
        },
      }).finally(() => {
        ended = true;
      });
      await driver(() => client.query("COMMIT"));
      return result;
    } catch (error) {
      // A lost or stalled connection has rolled back (or will); asking it would only wait.
      const cause = error instanceof DatabaseError ? error.cause : error;
      if (held.lost() || connectionLost(cause) || /timeout/i.test(errorMessage(cause))) discard = true;
      else await client.query("ROLLBACK").catch(() => (discard = true));
      throw error;
    } finally {
      held.release(discard);
    }
  }

  /**
   * A client with a transaction begun. While held, a client has no listener of the pool's: a
   * connection lost then (a terminated backend, a restart) would be an unhandled 'error' event,
   * which ends the process. So it gets one of its own until released; the statement running, if
   * any, fails with the error. A connection found lost at BEGIN is replaced, as nothing ran on it.
   */
  async #begin(): Promise<{ client: pg.PoolClient; lost(): boolean; release(discard: boolean): void }> {
    for (let attempt = 1; ; attempt++) {
      const client = await driver(() => this.#pool.connect());
      let lost: Error | undefined;
      const onError = (error: Error) => {
        lost ??= error;
      };
      client.on("error", onError);
      const release = (discard: boolean) => {
        client.off("error", onError);
        // Released with an error, a client is closed rather than returned to the pool.
        client.release(discard || lost ? (lost ?? new Error("connection discarded")) : undefined);
      };
      try {
        await client.query("BEGIN");
        return { client, lost: () => lost !== undefined, release };
      } catch (error) {
        release(true);
        if (attempt === STALE_CONNECTION_ATTEMPTS || !connectionLost(error)) throw new DatabaseError(errorMessage(error), error);
      }
    }
  }

  exec(sql: string): Promise<void> {
    return driver(async () => void (await this.#pool.query(sql)));
  }

  async close(): Promise<void> {
    await Promise.all([this.#pool.end(), this.#probePool.end()]);
  }

  poolStats(): PoolStats {
    return { total: this.#pool.totalCount, idle: this.#pool.idleCount, waiting: this.#pool.waitingCount };
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function newPool(url: string, options: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, keepAlive: true, ...options });
  // An idle client losing its connection must not end the process; the pool drops it and the next query reconnects.
  pool.on("error", () => undefined);
  return pool;
}

/** Emscripten's numbers for the errors PGlite's file system reports without a message. */
const EMSCRIPTEN_ERRNO: Record<number, string> = { 2: "permission denied", 44: "no such file or directory", 54: "not a directory", 55: "no space left on device", 63: "read-only file system" };

function pgliteFailure(error: unknown): string {
  const { message, errno } = (error ?? {}) as { message?: string; errno?: number };
  if (message) return message;
  return errno === undefined ? String(error) : `file system error ${errno} (${EMSCRIPTEN_ERRNO[errno] ?? "unknown"})`;
}

function copyNewDatabase(dir: string): void {
  try {
    copyTemplate(dir);
  } catch (error) {
    throw new DataDirError(dir, `cannot hold a new database: ${(error as Error).message}`, false, error);
  }
}

/**
 * The embedded database, locked to this process (see data-dir-lock.ts). A directory that is not
 * empty yet holds no database is refused rather than initialised: it is someone else's.
 */
async function openEmbedded(dataDir: string): Promise<Database> {
  const dir = resolve(dataDir);
  try {
    const stat = statSync(dir, { throwIfNoEntry: false });
    if (stat && !stat.isDirectory()) throw new DataDirError(dir, "is a file, not a directory", false);
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw error instanceof DataDirError ? error : new DataDirError(dir, `cannot be created or read: ${(error as Error).message}`, false, error);
  }
  let lock: DataDirLock;
  try {
    lock = await lockDataDir(dir);
  } catch (error) {
    throw error instanceof DataDirLockedError ? error : new DataDirError(dir, `cannot hold its lock file: ${(error as Error).message}`, false, error);
  }
  try {
    const entries = readdirSync(dir).filter((name) => name !== LOCK_FILE && name !== HOLDER_FILE);
    if (entries.length > 0 && !entries.includes("PG_VERSION")) {
      throw new DataDirError(dir, `is not empty and holds no database (it has ${entries.slice(0, 3).join(", ")}${entries.length > 3 ? ", …" : ""})`, false);
    }
    // A new database: the build's copy of initdb's output when there is one (embedded-template.ts).
    if (entries.length === 0) copyNewDatabase(dir);
    const db = new PGlite(dir, embeddedOptions());
    await db.waitReady;
    return new EmbeddedDatabase(db, lock);
  } catch (error) {
    lock.release();
    throw error instanceof DataDirError ? error : new DataDirError(dir, `holds a database that cannot be opened: ${pgliteFailure(error)}`, true, error);
  }
}

/** Opens the database named by DATABASE_URL (see config.ts); `dataDir` is the embedded database's directory. */
export async function openDatabase(url: string | undefined, { dataDir = "./.data", postgres = POSTGRES_DEFAULTS }: { dataDir?: string; postgres?: PostgresSettings } = {}): Promise<Database> {
  if (url?.startsWith("postgres")) {
    const db = new PostgresDatabase(url, postgres);
    try {
      await db.query("SELECT 1");
    } catch (error) {
      await db.close();
      throw error;
    }
    return db;
  }
  if (url !== "memory:") return openEmbedded(dataDir);
  const db = new PGlite(embeddedOptions());
  await db.waitReady;
  return new EmbeddedDatabase(db, null);
}
