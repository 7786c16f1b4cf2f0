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

/**
 * PGlite is a single connection, so statements from concurrent requests would interleave inside
 * another request's transaction. A promise chain serialises every query and transaction.
 */
class EmbeddedDatabase implements Database {
  readonly engine = "pglite" as const;
  #tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly db: PGlite) {}

  #exclusive<T>(run: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(run, run);
    this.#tail = result.catch(() => undefined);
    return result;
  }

  query<Row>(sql: string, params: unknown[] = []): Promise<Row[]> {
    return this.#exclusive(() => driver(async () => (await this.db.query<Row>(sql, params)).rows));
  }

  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.#exclusive(() =>
      this.db.transaction((tx) =>
        work({ query: <Row>(sql: string, params: unknown[] = []) => driver(async () => (await tx.query<Row>(sql, params)).rows) }),
      ),
    );
  }

  exec(sql: string): Promise<void> {
    return this.#exclusive(() => driver(async () => void (await this.db.exec(sql))));
  }

  close(): Promise<void> {
    return this.#exclusive(() => this.db.close());
  }
}

class PostgresDatabase implements Database {
  readonly engine = "postgres" as const;

  constructor(private readonly pool: pg.Pool) {}

  query<Row>(sql: string, params: unknown[] = []): Promise<Row[]> {
    return driver(async () => (await this.pool.query(sql, params)).rows as Row[]);
  }

  async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await driver(() => this.pool.connect());
    try {
      await driver(() => client.query("BEGIN"));
      const result = await work({
        query: <Row>(sql: string, params: unknown[] = []) => driver(async () => (await client.query(sql, params)).rows as Row[]),
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
