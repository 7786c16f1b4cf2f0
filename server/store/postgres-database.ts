/** The PostgreSQL engine: a pool of connections to a server that other processes may share. */
import { createHash } from "node:crypto";
import pg from "pg";
import type { Database, PoolStats, Queryable } from "./database-interface.ts";
import { DatabaseError, driver, errorMessage } from "./database-errors.ts";
import { chargedToRequest, databaseTimeLeft } from "./request-budget.ts";

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
 * cancelled the statement by then, so only a server that stopped answering gets here. A request's
 * database work as a whole gets one statement time-out plus this grace (store/request-budget.ts).
 */
export const ANSWER_GRACE_MS = 1_000;

/** Tries on connections found lost before giving up: after a restart, the pool's idle ones all are. */
const STALE_CONNECTION_ATTEMPTS = 3;

/**
 * A statement that only reads, so running it again after its connection was lost does nothing
 * twice. Our reads call no writing function; a read that did would have to be written as a CTE.
 */
const RETRYABLE_READ = /^\s*SELECT\b/i;

/** SQLSTATEs of a session the server ended: admin_shutdown, crash_shutdown, cannot_connect_now. */
const SESSION_ENDED = new Set(["57P01", "57P02", "57P03"]);

/** SQLSTATEs of a transaction the server rolled back so that it may run again: serialization failure, deadlock. */
const RUN_AGAIN = new Set(["40001", "40P01"]);

/** How long a lost COMMIT's outcome is asked for while the server still shows it in progress. */
const OUTCOME_POLLS = 10;
const OUTCOME_POLL_MS = 100;

const OUT_OF_TIME = "The request's database time (one statement time-out plus the grace) is spent";

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

/**
 * A prepared statement whose result changed under it: a migration added a column to a table it
 * reads with `*` (another process's, during a rolling upgrade). PostgreSQL refuses to run it, so it
 * did nothing; the connection, which keeps the statement prepared, is closed and it runs again on
 * a fresh one, prepared anew.
 */
function planOutdated(error: unknown): boolean {
  const { code, message = "" } = (error ?? {}) as { code?: string; message?: string };
  return code === "0A000" && /cached plan must not change result type/.test(message);
}

function causeOf(error: unknown): unknown {
  return error instanceof DatabaseError ? error.cause : error;
}

/** A client held from the pool, with its own 'error' listener while held (see #hold). */
interface Held {
  client: pg.PoolClient;
  lost(): boolean;
  release(discard: boolean): void;
}

class PostgresDatabase implements Database {
  readonly engine = "postgres" as const;
  readonly noSnapshotReason =
    "This server runs on PostgreSQL: back the database up with pg_dump (or your provider's backups), as docs/operators.md says; the operator API backs up the embedded database only.";
  readonly requestTimeBudgetMs: number;
  #names = new Map<string, string>();
  readonly #pool: pg.Pool;
  readonly #answerTimeoutMs: number;
  readonly #acquireTimeoutMs: number;
  /** The readiness probe's own connection: a saturated pool must not fail every probe. */
  readonly #probePool: pg.Pool;
  readonly probe: Queryable;

  constructor(url: string, settings: PostgresSettings) {
    this.#answerTimeoutMs = settings.statementTimeoutMs + ANSWER_GRACE_MS;
    this.requestTimeBudgetMs = this.#answerTimeoutMs;
    this.#acquireTimeoutMs = settings.acquireTimeoutMs;
    this.#pool = newPool(url, {
      max: settings.poolMax,
      connectionTimeoutMillis: settings.acquireTimeoutMs,
      statement_timeout: settings.statementTimeoutMs,
      idle_in_transaction_session_timeout: settings.idleInTransactionTimeoutMs,
      query_timeout: this.#answerTimeoutMs,
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
   * after such a migration, as after any schema change.) The client gives up on the answer when
   * the request's database time is spent.
   */
  #statement(text: string, values: unknown[]): pg.QueryConfig & { query_timeout: number } {
    let name = this.#names.get(text);
    if (name === undefined && this.#names.size < PREPARED_STATEMENTS) {
      name = `s${createHash("sha256").update(text).digest("hex").slice(0, 24)}`;
      this.#names.set(text, name);
    }
    const query_timeout = this.#answerTimeout();
    return name === undefined ? { text, values, query_timeout } : { name, text, values, query_timeout };
  }

  /**
   * How long the client waits for an answer now: the time-out plus grace, or the request's time
   * left. A transaction's end (`finishing`: its COMMIT) gets at least the grace, so a request whose
   * time ran out in its last statement is not made to abandon work it has done.
   */
  #answerTimeout(finishing = false): number {
    const left = databaseTimeLeft();
    return Math.max(1, Math.min(this.#answerTimeoutMs, finishing ? Math.max(left, ANSWER_GRACE_MS) : left));
  }

  async query<Row>(sql: string, params: unknown[] = []): Promise<Row[]> {
    for (let attempt = 1; ; attempt++) {
      const held = await this.#hold();
      let discard = false;
      try {
        return (await chargedToRequest(() => held.client.query(this.#statement(sql, params)))).rows as Row[];
      } catch (error) {
        discard = connectionLost(error) || planOutdated(error) || /timeout/i.test(errorMessage(error));
        // A read that met a connection lost under it (one the pool had not yet seen fail: after a
        // restart, every idle one) runs again on another; a write may have been done, so it does not.
        // A statement whose plan is outdated did nothing, read or write.
        const again = planOutdated(error) || (connectionLost(error) && RETRYABLE_READ.test(sql));
        if (attempt === STALE_CONNECTION_ATTEMPTS || !again) throw new DatabaseError(errorMessage(error), error);
      } finally {
        held.release(discard || held.lost());
      }
    }
  }

  /**
   * Runs `work` in a transaction, and tells its outcome truly:
   * - a connection lost before COMMIT was sent (a terminated backend, a restart), or a transaction
   *   the server rolled back to be run again (deadlock, serialization), committed nothing, so
   *   `work` runs again on a fresh connection, up to three times in all;
   * - a COMMIT whose answer was lost is resolved by asking the server what became of the
   *   transaction's id (`txid_status`): committed is a success, aborted runs `work` again;
   * - only an outcome that cannot be learnt (the server away, or the request's time spent) is a
   *   DatabaseError, answered 500 db_error.
   * So `work` may run more than once: only its last run commits, and it must do nothing outside
   * the database that a second run would repeat.
   */
  async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const { held, xid } = await this.#begin();
      const outcome = await this.#runOnce(held, xid, work);
      if (outcome.done) return outcome.result;
      if (attempt >= STALE_CONNECTION_ATTEMPTS || databaseTimeLeft() <= 0) throw outcome.error;
    }
  }

  /** One run of `work`: done with its result, or failed with nothing committed (`error` is what to raise if no run is left). */
  async #runOnce<T>(
    held: Held,
    xid: string,
    work: (tx: Queryable) => Promise<T>,
  ): Promise<{ done: true; result: T } | { done: false; error: unknown }> {
    const { client } = held;
    let discard = false;
    let result: T;
    try {
      let ended = false;
      result = await work({
        query: <Row>(sql: string, params: unknown[] = []) => {
          // A handle kept past its transaction would run on a connection back in the pool.
          if (ended) return Promise.reject(new DatabaseError("Transaction is closed"));
          return driver(
            async () => (await chargedToRequest(() => client.query(this.#statement(sql, params)))).rows as Row[],
          );
        },
      }).finally(() => {
        ended = true;
      });
    } catch (error) {
      // A lost or stalled connection has rolled back (or will); asking it would only wait.
      const cause = causeOf(error);
      const lost = held.lost() || connectionLost(cause);
      if (lost || planOutdated(cause) || /timeout/i.test(errorMessage(cause))) discard = true;
      else await client.query("ROLLBACK").catch(() => (discard = true));
      held.release(discard);
      const again = lost || planOutdated(cause) || RUN_AGAIN.has((cause as { code?: string } | undefined)?.code ?? "");
      if (again) return { done: false, error };
      throw error;
    }
    try {
      await chargedToRequest(() =>
        client.query({ text: "COMMIT", query_timeout: this.#answerTimeout(true) } as pg.QueryConfig),
      );
      held.release(false);
      return { done: true, result };
    } catch (error) {
      const lost = held.lost() || connectionLost(error) || /timeout/i.test(errorMessage(error));
      held.release(true);
      if (!lost) {
        // Refused by the server (a deferred constraint, a serialization failure): rolled back.
        if (RUN_AGAIN.has((error as { code?: string }).code ?? ""))
          return { done: false, error: new DatabaseError(errorMessage(error), error) };
        throw new DatabaseError(errorMessage(error), error);
      }
      const status = await this.#outcomeOf(xid);
      if (status === "committed") return { done: true, result };
      if (status === "aborted") return { done: false, error: new DatabaseError(errorMessage(error), error) };
      throw new DatabaseError(
        `The outcome of a COMMIT whose answer was lost is unknown: ${errorMessage(error)}`,
        error,
      );
    }
  }

  /**
   * What became of transaction `xid`, asked on another connection: committed, aborted, or unknown.
   * Asked within the grace, whatever the request has left: it is what makes the answer true.
   */
  async #outcomeOf(xid: string): Promise<"committed" | "aborted" | "unknown"> {
    const until = Date.now() + ANSWER_GRACE_MS;
    for (let poll = 0; poll < OUTCOME_POLLS && Date.now() < until; poll++) {
      const status = await this.#pool
        .query<{ status: string | null }>({
          text: "SELECT txid_status($1) AS status",
          values: [xid],
          query_timeout: Math.max(1, until - Date.now()),
        } as pg.QueryConfig)
        .then(
          ({ rows: [row] }) => row?.status ?? null,
          // A connection lost too (after a restart, the idle ones are): ask again on another.
          () => "not asked",
        );
      if (status === "committed" || status === "aborted") return status;
      if (status === null) return "unknown";
      // Still in progress (the server is finishing the COMMIT it was sent), or not asked yet.
      await new Promise((resolve) => setTimeout(resolve, OUTCOME_POLL_MS));
    }
    return "unknown";
  }

  /**
   * A client with a transaction begun, and the transaction's id (to learn a lost COMMIT's
   * outcome). A connection found lost at BEGIN is replaced, as nothing ran on it.
   */
  async #begin(): Promise<{ held: Held; xid: string }> {
    for (let attempt = 1; ; attempt++) {
      const held = await this.#hold();
      try {
        const results = (await chargedToRequest(() =>
          held.client.query({
            text: "BEGIN; SELECT txid_current()::text AS xid",
            query_timeout: this.#answerTimeout(),
          } as pg.QueryConfig),
        )) as unknown as pg.QueryResult<{ xid: string }>[];
        return { held, xid: results[1]!.rows[0]!.xid };
      } catch (error) {
        held.release(true);
        if (attempt === STALE_CONNECTION_ATTEMPTS || !connectionLost(error) || databaseTimeLeft() <= 0)
          throw new DatabaseError(errorMessage(error), error);
      }
    }
  }

  /**
   * A client from the pool, waiting no longer than the request's time left. While held, a client
   * has no listener of the pool's: a connection lost then (a terminated backend, a restart) would
   * be an unhandled 'error' event, which ends the process. So it gets one of its own until
   * released; the statement running, if any, fails with the error.
   */
  async #hold(): Promise<Held> {
    const client = await chargedToRequest(() => this.#connect());
    let lost: Error | undefined;
    const onError = (error: Error) => {
      lost ??= error;
    };
    client.on("error", onError);
    return {
      client,
      lost: () => lost !== undefined,
      release: (discard: boolean) => {
        client.off("error", onError);
        // Released with an error, a client is closed rather than returned to the pool.
        client.release(discard || lost ? (lost ?? new Error("connection discarded")) : undefined);
      },
    };
  }

  async #connect(): Promise<pg.PoolClient> {
    const left = databaseTimeLeft();
    if (left <= 0) throw new DatabaseError(OUT_OF_TIME);
    if (left >= this.#acquireTimeoutMs) return driver(() => this.#pool.connect());
    const connecting = this.#pool.connect();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DatabaseError(OUT_OF_TIME)), left);
    });
    try {
      return await driver(() => Promise.race([connecting, expired]));
    } catch (error) {
      // A connection that comes after all goes back to the pool.
      connecting.then(
        (client) => client.release(),
        () => undefined,
      );
      throw error;
    } finally {
      clearTimeout(timer);
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
  // Nor may one losing it in a gap between listeners: being handed out, or closed after a discard
  // (a terminated backend's FATAL message arrives then). Each holder still learns of it (#hold).
  pool.on("connect", (client) => client.on("error", () => undefined));
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
