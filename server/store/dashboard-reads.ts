import type { Mode } from "../domain/types.ts";
import { dateOf } from "./columns.ts";
import type { Queryable } from "./database.ts";

/** Streams of the brand and mode in preparing or live (what the concurrency limit counts). */
export async function activeStreamCount(db: Queryable, brandId: string, mode: Mode): Promise<number> {
  const [row] = await db.query<{ count: string | number }>(
    `SELECT count(*) AS count FROM streams WHERE brand_id = $1 AND mode = $2 AND status IN ('preparing', 'live')`,
    [brandId, mode],
  );
  return Number(row?.count ?? 0);
}

/** The brand's request count in the window starting at `windowStart`, as counted on PostgreSQL. */
export async function brandWindowCount(db: Queryable, brandId: string, windowStart: Date): Promise<number> {
  const [row] = await db.query<{ count: number }>(
    `SELECT count FROM rate_limit_windows WHERE brand_id = $1 AND window_start = $2`,
    [brandId, windowStart],
  );
  return row?.count ?? 0;
}

export async function keyLastUse(db: Queryable, keyIds: readonly string[]): Promise<Map<string, Date>> {
  if (keyIds.length === 0) return new Map();
  const rows = await db.query<{ id: string; last_used_at: Date | string }>(
    `SELECT id, last_used_at FROM api_keys WHERE id = ANY($1::uuid[]) AND last_used_at IS NOT NULL`,
    [keyIds],
  );
  return new Map(rows.map((row) => [row.id, dateOf(row.last_used_at)]));
}
