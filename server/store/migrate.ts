import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Database, Queryable } from "./database.ts";

const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations/", import.meta.url));

/**
 * The database records contracting migrations this code does not have: a newer version migrated
 * it and dropped, renamed or retyped something this code may still use.
 */
export class SchemaTooNewError extends Error {
  override name = "SchemaTooNewError";
  readonly unknown: string[];
  constructor(unknown: string[]) {
    super(
      `the database was migrated by a newer version of this server (contracting migrations this version does not have: ${unknown.join(", ")})`,
    );
    this.unknown = unknown;
  }
}

/**
 * A migration's `-- contract: <reason>` line, in the comments before its first statement: it
 * drops, renames or retypes something the previous release reads, so that release's processes
 * must be stopped before it runs, and no older version may run on a database it migrated
 * (`npm run lint:migrations` refuses such a change without the line). Null for an expand-only one.
 */
export function contractReason(sql: string): string | null {
  for (const line of sql.split("\n")) {
    const text = line.trim();
    if (text === "") continue;
    if (!text.startsWith("--")) return null;
    const marked = /^--\s*contract:\s*(.*)$/i.exec(text);
    if (marked) return marked[1]!.trim() || "no reason given";
  }
  return null;
}

/** What migrate() did, and what it found of a newer version. */
export interface MigrationOutcome {
  /** The migrations it applied now, in order. */
  applied: string[];
  /** Expand-only migrations of a newer version already applied, which this version runs beside. */
  newer: string[];
}

/**
 * Applies the SQL files of migrations/ in name order, each once, each in its own transaction.
 * An advisory lock keeps two server processes starting at once on PostgreSQL from racing.
 * Older code runs on a database a newer version migrated as long as those migrations only added
 * (tables, columns, indexes: it never names them); a contracting one it does not have (marked
 * `-- contract:`, recorded in `schema_migrations.contracting`) makes it refuse.
 */
export async function migrate(db: Database): Promise<string[]> {
  return (await migrateDatabase(db)).applied;
}

export async function migrateDatabase(db: Database): Promise<MigrationOutcome> {
  const sources = await migrationSources();
  const files = [...sources.keys()];
  const contracting = files.filter((name) => contractReason(sources.get(name)!) !== null);
  const applied: string[] = [];
  let newer: string[] = [];
  await db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(727274)");
    await tx.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    await tx.query("ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS contracting boolean NOT NULL DEFAULT false");
    const done = await appliedMigrations(tx);
    const unknown = [...done.keys()].filter((name) => !sources.has(name)).sort();
    const refused = unknown.filter((name) => done.get(name) === true);
    if (refused.length > 0) throw new SchemaTooNewError(refused);
    newer = unknown;
    // Migrations applied before they were marked (or by a version that did not record marks).
    await tx.query("UPDATE schema_migrations SET contracting = true WHERE name = ANY($1::text[]) AND NOT contracting", [
      contracting,
    ]);
    for (const name of files) {
      if (done.has(name)) continue;
      for (const statement of splitStatements(sources.get(name)!)) await tx.query(statement);
      await tx.query("INSERT INTO schema_migrations (name, contracting) VALUES ($1, $2)", [
        name,
        contracting.includes(name),
      ]);
      applied.push(name);
    }
  });
  return { applied, newer };
}

/** The migrations a database records, each with whether it was contracting. */
export async function appliedMigrations(db: Queryable): Promise<Map<string, boolean>> {
  const rows = await db.query<{ name: string; contracting: boolean }>(
    "SELECT name, contracting FROM schema_migrations ORDER BY name",
  );
  return new Map(rows.map((row) => [row.name, row.contracting]));
}

/** The migrations this code has: file names in the order they apply, each with whether it is contracting. */
export async function knownMigrations(): Promise<Map<string, boolean>> {
  const sources = await migrationSources();
  return new Map([...sources].map(([name, sql]) => [name, contractReason(sql) !== null]));
}

async function migrationSources(): Promise<Map<string, string>> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((name) => name.endsWith(".sql")).sort();
  const sources = new Map<string, string>();
  for (const name of files) sources.set(name, await readFile(MIGRATIONS_DIR + name, "utf8"));
  return sources;
}

/**
 * Splits a migration on `;`, except inside dollar-quoted bodies (`$$ … $$`, `$fn$ … $fn$`: the
 * trigger functions of 005). Comments are dropped first; our migrations quote no `--` or `;`
 * outside such bodies.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let current = "";
  let quote: string | null = null;
  for (const token of sql.replace(/--.*$/gm, "").split(/(\$[A-Za-z_]*\$|;)/)) {
    if (quote === null && token === ";") {
      statements.push(current);
      current = "";
      continue;
    }
    if (/^\$[A-Za-z_]*\$$/.test(token)) quote = quote === null ? token : quote === token ? null : quote;
    current += token;
  }
  statements.push(current);
  return statements.map((statement) => statement.trim()).filter((statement) => statement !== "");
}
