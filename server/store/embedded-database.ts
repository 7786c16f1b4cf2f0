/** The embedded engine: PostgreSQL compiled to WebAssembly (PGlite), in this process, one session. */
import { randomBytes } from "node:crypto";
import { constants, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { cp, readdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { type DataDirLock, DataDirLockedError, HOLDER_FILE, LOCK_FILE, lockDataDir } from "./data-dir-lock.ts";
import type { Database, PoolStats, Queryable, Snapshot } from "./database-interface.ts";
import { DataDirError, driver } from "./database-errors.ts";
import {
  FLUSH_STATISTICS,
  MAINTENANCE_INTERVAL_MS,
  maintenanceStatement,
  type TableDue,
  TABLES_DUE,
} from "./embedded-maintenance.ts";
import { embeddedOptions } from "./embedded-settings.ts";
import { copyTemplate, templateArchive } from "./embedded-template.ts";
import { isRowStatement, PreparedStatements, type Unprepared } from "./pglite-statements.ts";

/** Statement texts prepared by name at most; past it, statements run unnamed (parsed each time). */
const PREPARED_STATEMENTS = 500;

/**
 * What in a data directory is not the database: the lock, PostgreSQL's note of its running
 * process, and the folders of backups and restores (a snapshot being taken, a restore being
 * checked, the directory a restore moved aside).
 */
const NOT_THE_DATABASE = new Set([LOCK_FILE, HOLDER_FILE, "postmaster.pid", "postmaster.opts"]);
export const SNAPSHOT_PREFIX = ".backup-";
export const RESTORE_PREFIX = ".restore-";
export const REPLACED_PREFIX = ".replaced-";
export const isDatabaseEntry = (name: string): boolean =>
  !NOT_THE_DATABASE.has(name) && ![SNAPSHOT_PREFIX, RESTORE_PREFIX, REPLACED_PREFIX].some((p) => name.startsWith(p));

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
  readonly #unprepared: Unprepared = async <Row>(sql: string, params: unknown[]) =>
    (await this.db.query<Row>(sql, params)).rows;

  private readonly db: PGlite;
  private readonly lock: DataDirLock | null;
  readonly snapshot?: () => Promise<Snapshot>;
  readonly noSnapshotReason?: string;

  constructor(db: PGlite, lock: DataDirLock | null, dir: string | null = null) {
    this.db = db;
    this.lock = lock;
    this.#statements = new PreparedStatements(db, PREPARED_STATEMENTS);
    this.#maintenance = setInterval(() => void this.maintain().catch(() => undefined), MAINTENANCE_INTERVAL_MS).unref();
    if (dir !== null) this.snapshot = () => this.#snapshot(dir);
    else
      this.noSnapshotReason =
        "This server's database is in memory (DATABASE_URL=memory:): there is nothing to back up.";
  }

  /**
   * A copy of the data directory that PostgreSQL can open as it was at one instant: taken in the
   * queue, so no statement runs while the files are copied (PGlite is this process's one session:
   * nothing else writes them), after a CHECKPOINT, which writes every changed page out of
   * PGlite's memory into the files. What a request committed before is in it; what one commits
   * after is not. Requests wait for the copy: it is a copy of files on the same disk (a reflink
   * where the file system has them), not an export.
   */
  async #snapshot(dir: string): Promise<Snapshot> {
    const into = join(dir, `${SNAPSHOT_PREFIX}${process.pid}-${randomBytes(4).toString("hex")}`);
    const taken = await this.#exclusive(async () => {
      await driver(async () => void (await this.db.exec("CHECKPOINT")));
      const rows = await this.#run<{ name: string; contracting: boolean }>(
        "SELECT name, contracting FROM schema_migrations ORDER BY name",
        [],
      );
      for (const name of (await readdir(dir)).filter(isDatabaseEntry))
        await cp(join(dir, name), join(into, name), { recursive: true, mode: constants.COPYFILE_FICLONE });
      return rows;
    }).catch(async (error: unknown) => {
      await rm(into, { recursive: true, force: true });
      throw error;
    });
    return {
      dir: into,
      migrations: taken.map((row) => row.name),
      contracting: taken.filter((row) => row.contracting).map((row) => row.name),
      discard: () => rm(into, { recursive: true, force: true }),
    };
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
        const unprepared: Unprepared = async <R>(text: string, values: unknown[]) =>
          (await tx.query<R>(text, values)).rows;
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

/** Emscripten's numbers for the errors PGlite's file system reports without a message. */
const EMSCRIPTEN_ERRNO: Record<number, string> = {
  2: "permission denied",
  44: "no such file or directory",
  54: "not a directory",
  55: "no space left on device",
  63: "read-only file system",
};

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
export async function openEmbedded(dataDir: string): Promise<Database> {
  const dir = resolve(dataDir);
  try {
    const stat = statSync(dir, { throwIfNoEntry: false });
    if (stat && !stat.isDirectory()) throw new DataDirError(dir, "is a file, not a directory", false);
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw error instanceof DataDirError
      ? error
      : new DataDirError(dir, `cannot be created or read: ${(error as Error).message}`, false, error);
  }
  let lock: DataDirLock;
  try {
    lock = await lockDataDir(dir);
  } catch (error) {
    throw error instanceof DataDirLockedError
      ? error
      : new DataDirError(dir, `cannot hold its lock file: ${(error as Error).message}`, false, error);
  }
  try {
    const entries = readdirSync(dir).filter((name) => name !== LOCK_FILE && name !== HOLDER_FILE);
    if (entries.length > 0 && !entries.includes("PG_VERSION")) {
      throw new DataDirError(
        dir,
        `is not empty and holds no database (it has ${entries.slice(0, 3).join(", ")}${entries.length > 3 ? ", …" : ""})`,
        false,
      );
    }
    // A backup or a restore a killed process left behind: the lock says none runs now.
    for (const name of entries.filter((entry) => entry.startsWith(SNAPSHOT_PREFIX) || entry.startsWith(RESTORE_PREFIX)))
      rmSync(join(dir, name), { recursive: true, force: true });
    // A new database: the build's copy of initdb's output when there is one (embedded-template.ts).
    if (entries.length === 0) copyNewDatabase(dir);
    const db = new PGlite(dir, embeddedOptions());
    await db.waitReady;
    return new EmbeddedDatabase(db, lock, dir);
  } catch (error) {
    lock.release();
    throw error instanceof DataDirError
      ? error
      : new DataDirError(dir, `holds a database that cannot be opened: ${pgliteFailure(error)}`, true, error);
  }
}

/**
 * A database in memory, gone when the process ends (`DATABASE_URL=memory:`, the tests, the
 * dynamic mock): unpacked from the build's archive of the template (embedded-template.ts) when
 * there is one for the installed PGlite, else made by initdb.
 */
export async function openInMemory({ archive = templateArchive() }: { archive?: string } = {}): Promise<Database> {
  const template = existsSync(archive) ? { loadDataDir: new Blob([readFileSync(archive)]) } : {};
  const db = new PGlite({ ...embeddedOptions(), ...template });
  await db.waitReady;
  return new EmbeddedDatabase(db, null);
}
