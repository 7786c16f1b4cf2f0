import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Queryable } from "./database.ts";
import { findKeyWithBrandCounted } from "./keys.ts";
import { countSessionRequest, findSession } from "./dashboard-sessions.ts";

/** A SHA-256 hex no key or session has. */
const NO_HASH = "0".repeat(64);

/**
 * Runs the statements every authenticated request begins with (the API key's look-up with its
 * rate-limit count; the dashboard session's look-up and count) for a hash that matches nothing:
 * nothing is changed, and it answers only while they can run, so a lock on api_keys or
 * dashboard_sessions that holds every request holds it too.
 */
export async function authenticationRuns(db: Queryable, now: Date): Promise<void> {
  await findKeyWithBrandCounted(db, NO_HASH, now, now);
  await findSession(db, NO_HASH, now);
  await countSessionRequest(db, NO_HASH, now);
}

/** Streams by status, across brands and modes: one grouped scan for the `streams` gauge. */
export async function countStreamsByStatus(db: Queryable): Promise<Map<string, number>> {
  const rows = await db.query<{ status: string; count: number }>(
    "SELECT status, count(*)::int AS count FROM streams GROUP BY status",
  );
  return new Map(rows.map((row) => [row.status, Number(row.count)]));
}

export interface DeliveryBacklog {
  /** Deliveries still pending (due, leased or waiting for a retry). */
  pending: number;
  /** When the longest-due delivery fell due; null when none is due at `now`. */
  oldestDueAt: Date | null;
}

/**
 * What the webhook backlog gauges read, from the pending deliveries' partial index and the events
 * not yet expanded into deliveries (each counts one delivery per webhook it is for, due at its time).
 */
export async function deliveryBacklog(db: Queryable, now: Date): Promise<DeliveryBacklog> {
  const [row] = await db.query<{ pending: number; oldest_due: Date | string | null }>(
    `SELECT d.pending + e.pending AS pending, least(d.oldest_due, e.oldest_due) AS oldest_due
     FROM (SELECT count(*)::int AS pending, min(next_attempt_at) FILTER (WHERE next_attempt_at <= $1) AS oldest_due
           FROM webhook_deliveries WHERE status = 'pending') d,
          (SELECT coalesce(sum(cardinality(pending_webhook_ids)), 0)::int AS pending, min(created_at) FILTER (WHERE created_at <= $1) AS oldest_due
           FROM webhook_events WHERE pending_webhook_ids IS NOT NULL) e`,
    [now],
  );
  return { pending: Number(row?.pending ?? 0), oldestDueAt: row?.oldest_due ? new Date(row.oldest_due) : null };
}

let latest: string | undefined;

/** The newest migration this code knows: the last SQL file of migrations/ in name order (as migrate.ts applies them). */
export function latestMigration(): string {
  latest ??=
    readdirSync(fileURLToPath(new URL("./migrations/", import.meta.url)))
      .filter((name) => name.endsWith(".sql"))
      .sort()
      .at(-1) ?? "";
  return latest;
}

/** Whether the database records the newest migration this code knows; one trivial query, so it also says the database answers. */
export async function hasLatestMigration(db: Queryable): Promise<boolean> {
  const [row] = await db.query<{ applied: boolean }>(
    "SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE name = $1) AS applied",
    [latestMigration()],
  );
  return row?.applied === true;
}
