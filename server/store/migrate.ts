import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Database } from "./database.ts";

const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations/", import.meta.url));

/** The database records migrations this code does not have: a newer version migrated it. */
export class SchemaTooNewError extends Error {
  override name = "SchemaTooNewError";
  readonly unknown: string[];
  constructor(unknown: string[]) {
    super(
      `the database was migrated by a newer version of this server (migrations this version does not have: ${unknown.join(", ")})`,
    );
    this.unknown = unknown;
  }
}

/**
 * Applies the SQL files of migrations/ in name order, each once, each in its own transaction.
 * An advisory lock keeps two server processes starting at once on PostgreSQL from racing.
 * Older code refuses a database a newer version migrated: its queries may no longer fit.
 */
export async function migrate(db: Database): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((name) => name.endsWith(".sql")).sort();
  const applied: string[] = [];
  await db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(727274)");
    await tx.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const done = new Set(
      (await tx.query<{ name: string }>("SELECT name FROM schema_migrations")).map((row) => row.name),
    );
    const unknown = [...done].filter((name) => !files.includes(name)).sort();
    if (unknown.length > 0) throw new SchemaTooNewError(unknown);
    for (const name of files) {
      if (done.has(name)) continue;
      const sql = await readFile(MIGRATIONS_DIR + name, "utf8");
      for (const statement of splitStatements(sql)) await tx.query(statement);
      await tx.query("INSERT INTO schema_migrations (name) VALUES ($1)", [name]);
      applied.push(name);
    }
  });
  return applied;
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
