import type { Queryable } from "./database.ts";

/**
 * The account records that end, and when each row ends: at the first of its expiry and its
 * revocation or use (LEAST skips NULLs). Migration 026 indexes each expression.
 */
const ENDED = {
  dashboard_sessions: { key: "id_hash", endedAt: "LEAST(expires_at, revoked_at)" },
  invitations: { key: "id", endedAt: "LEAST(expires_at, used_at, revoked_at)" },
  password_resets: { key: "id", endedAt: "LEAST(expires_at, used_at)" },
} as const;

export type EndingTable = keyof typeof ENDED;
export const ENDING_TABLES = Object.keys(ENDED) as EndingTable[];

/** Deletes up to `batch` rows of `table` that ended before `before`; returns how many. */
export async function deleteEndedRows(db: Queryable, table: EndingTable, before: Date, batch = 1000): Promise<number> {
  const { key, endedAt } = ENDED[table];
  const rows = await db.query(
    `DELETE FROM ${table} WHERE ${key} IN (SELECT ${key} FROM ${table} WHERE ${endedAt} < $1 LIMIT $2) RETURNING 1`,
    [before, batch],
  );
  return rows.length;
}
