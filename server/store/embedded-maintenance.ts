/**
 * The embedded database's own autovacuum. PGlite runs PostgreSQL as a single session, without
 * the autovacuum workers a PostgreSQL server has, so nothing would ever vacuum its tables (index
 * entries of updated rows pile up) or gather their statistics (the planner guesses, and may walk
 * a brand's whole index for one row). So the embedded database checks its tables every minute
 * and vacuums and analyzes those past PostgreSQL's own default thresholds.
 */

/** How often the tables are checked: autovacuum_naptime's default. */
export const MAINTENANCE_INTERVAL_MS = 60_000;

/** Has the session's pending statistics flushed before its next statement, which then reads them. */
export const FLUSH_STATISTICS = "SELECT pg_stat_force_next_flush()";

/**
 * Tables past autovacuum's default thresholds: dead rows over 50 + 20% of the live ones (vacuum),
 * rows changed since the last analyze over 50 + 10% (analyze), or never analyzed while holding rows.
 * (`analyze` is a keyword: quoted where it is read.)
 */
export const TABLES_DUE = `
  SELECT name, vacuum, "analyze" FROM (
    SELECT relname AS name,
           n_dead_tup > 50 + 0.2 * n_live_tup AS vacuum,
           n_mod_since_analyze > 50 + 0.1 * n_live_tup OR (last_analyze IS NULL AND n_live_tup > 0) AS analyze
    FROM pg_stat_user_tables
    WHERE schemaname = 'public'
  ) tables
  WHERE vacuum OR "analyze"
  ORDER BY name`;

export interface TableDue {
  name: string;
  vacuum: boolean;
  analyze: boolean;
}

/** The statement that maintains one table (VACUUM cannot run inside a transaction: run it on its own). */
export function maintenanceStatement(table: TableDue): string {
  const name = `"${table.name.replaceAll('"', '""')}"`;
  return table.vacuum ? `VACUUM (ANALYZE) public.${name}` : `ANALYZE public.${name}`;
}
