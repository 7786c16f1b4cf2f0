import { createHash } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";

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
}

/** Raised for any failure of the database itself; the HTTP layer answers 500 db_error. */
export class DatabaseError extends Error {
  override name = "DatabaseError";
  constructor(message: string, override readonly cause?: unknown) {
    super(message);
  }
}

/** Driver failures become DatabaseError; errors thrown by our own code inside a transaction keep their type. */
async function driver<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw new DatabaseError(error instanceof Error ? error.message : String(error), error);
  }
}

/** A statement that cannot change data (ours call no writing functions); anything else, a `WITH` included, is a write. */
const READ_ONLY = /^\s*SELECT\b/i;
/** Cached reads kept at most; past it the cache starts afresh (distinct reads between two writes are few). */
const READ_CACHE_ENTRIES = 1_000;

/**
 * PGlite is a single connection, so statements from concurrent requests would interleave inside
 * another request's transaction. A promise chain serialises every query and transaction.
 *
 * Reads outside transactions are cached until the next write. This is exact, not eventual: the
 * embedded database belongs to this process alone (PGlite cannot be shared), so every write
 * passes through this object. A write clears the cache once it has completed, before its caller
 * sees the result, and a read is stored only if no write completed while it ran, so a cached
 * answer is always what the database would answer now. Reads that depend on the time take it as a
 * parameter, which is part of the cache key. (A per-process cache would be wrong on PostgreSQL,
 * where other processes write: that engine has none.)
 */
class EmbeddedDatabase implements Database {
  readonly engine = "pglite" as const;
  #tail: Promise<unknown> = Promise.resolve();
  #reads = new Map<string, unknown[]>();
  /** Counts completed writes, so a read can tell whether one completed while it ran. */
  #writes = 0;

  constructor(private readonly db: PGlite) {}

  #exclusive<T>(run: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(run, run);
    this.#tail = result.catch(() => undefined);
    return result;
  }

  #wrote(): void {
    this.#writes += 1;
    this.#reads.clear();
  }

  async query<Row>(sql: string, params: unknown[] = []): Promise<Row[]> {
    if (!READ_ONLY.test(sql)) {
      try {
        return await this.#exclusive(() => driver(async () => (await this.db.query<Row>(sql, params)).rows));
      } finally {
        this.#wrote();
      }
    }
    const key = `${sql}\u0000${JSON.stringify(params)}`;
    const cached = this.#reads.get(key);
    // A copy, so a caller sorting or filtering its rows does not change what others get.
    if (cached) return cached.slice() as Row[];
    const writes = this.#writes;
    const rows = await this.#exclusive(() => driver(async () => (await this.db.query<Row>(sql, params)).rows));
    if (writes === this.#writes) {
      if (this.#reads.size >= READ_CACHE_ENTRIES) this.#reads.clear();
      this.#reads.set(key, rows);
    }
    return rows.slice();
  }

  async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    let wrote = false;
    try {
      return await this.#exclusive(() =>
        this.db.transaction((tx) =>
          work({
            query: <Row>(sql: string, params: unknown[] = []) => {
              wrote ||= !READ_ONLY.test(sql);
              return driver(async () => (await tx.query<Row>(sql, params)).rows);
            },
          }),
        ),
      );
    } finally {
      // Also after a rollback: harmless, and simpler than proving nothing was written.
      if (wrote) this.#wrote();
    }
  }

  async exec(sql: string): Promise<void> {
    try {
      await this.#exclusive(() => driver(async () => void (await this.db.exec(sql))));
    } finally {
      this.#wrote();
    }
  }

  close(): Promise<void> {
    return this.#exclusive(() => this.db.close());
  }
}

/** Statement texts prepared by name at most; past it, statements run unnamed (parsed each time). */
const PREPARED_STATEMENTS = 500;

class PostgresDatabase implements Database {
  readonly engine = "postgres" as const;
  #names = new Map<string, string>();

  constructor(private readonly pool: pg.Pool) {}

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

  query<Row>(sql: string, params: unknown[] = []): Promise<Row[]> {
    return driver(async () => (await this.pool.query(this.#statement(sql, params))).rows as Row[]);
  }

  async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await driver(() => this.pool.connect());
    try {
      await driver(() => client.query("BEGIN"));
      const result = await work({
        query: <Row>(sql: string, params: unknown[] = []) => driver(async () => (await client.query(this.#statement(sql, params))).rows as Row[]),
      });
      await driver(() => client.query("COMMIT"));
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  exec(sql: string): Promise<void> {
    return driver(async () => void (await this.pool.query(sql)));
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

/** Opens the database named by DATABASE_URL (see config.ts). */
export async function openDatabase(url: string | undefined, { dataDir = "./.data" } = {}): Promise<Database> {
  if (url?.startsWith("postgres")) {
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    // An idle client losing its connection must not crash the process; the next query reconnects.
    pool.on("error", () => undefined);
    await driver(() => pool.query("SELECT 1"));
    return new PostgresDatabase(pool);
  }
  const db = url === "memory:" ? new PGlite() : new PGlite(dataDir);
  await db.waitReady;
  return new EmbeddedDatabase(db);
}
