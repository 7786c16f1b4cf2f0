/**
 * The database as the rest of the server sees it (Queryable, Database), on either engine: the
 * embedded PostgreSQL of PGlite (store/embedded-database.ts) or a PostgreSQL server
 * (store/postgres-database.ts). openDatabase picks the engine from DATABASE_URL.
 */
import { openEmbedded, openInMemory } from "./embedded-database.ts";
import { openPostgres, POSTGRES_DEFAULTS, type PostgresSettings } from "./postgres-database.ts";

export { DatabaseError, DataDirError } from "./database-errors.ts";
export { POSTGRES_DEFAULTS, type PostgresSettings } from "./postgres-database.ts";

export type { Database, PoolStats, Queryable, Snapshot } from "./database-interface.ts";
import type { Database } from "./database-interface.ts";

/** Opens the database named by DATABASE_URL (see config.ts); `dataDir` is the embedded database's directory. */
export async function openDatabase(
  url: string | undefined,
  { dataDir = "./.data", postgres = POSTGRES_DEFAULTS }: { dataDir?: string; postgres?: PostgresSettings } = {},
): Promise<Database> {
  if (url?.startsWith("postgres")) return openPostgres(url, postgres);
  return url === "memory:" ? openInMemory() : openEmbedded(dataDir);
}
