/** The PostgreSQL engine: a pool of connections to a server that other processes may share. */
import { createHash } from "node:crypto";
import pg from "pg";
import type { Database, PoolStats, Queryable } from "./database.ts";
import { DatabaseError, driver, errorMessage } from "./database-errors.ts";

/** Statement texts prepared by name at most; past it, statements run unnamed (parsed each time). */
const PREPARED_STATEMENTS = 500;

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
  if (
    code !== undefined &&
    (SESSION_ENDED.has(code) || code.startsWith("08") || code === "ECONNRESET" || code === "EPIPE")
  )
    return true;
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
    this.probe = {
      query: <Row>(sql: string, params: unknown[] = []) =>
        driver(async () => (await probePool.query(sql, params)).rows as Row[]),
    };
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
        if (attempt === STALE_CONNECTION_ATTEMPTS || !connectionLost(error) || !RETRYABLE_READ.test(sql))
          throw new DatabaseError(errorMessage(error), error);
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
        if (attempt === STALE_CONNECTION_ATTEMPTS || !connectionLost(error))
          throw new DatabaseError(errorMessage(error), error);
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

function newPool(url: string, options: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, keepAlive: true, ...options });
  // An idle client losing its connection must not end the process; the pool drops it and the next query reconnects.
  pool.on("error", () => undefined);
  return pool;
}

/** Opens a pool on `url` and checks that the server answers. */
export async function openPostgres(url: string, settings: PostgresSettings): Promise<Database> {
  const db = new PostgresDatabase(url, settings);
  try {
    await db.query("SELECT 1");
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
