import type { EventType, Mode } from "../domain/types.ts";
import { dateOf } from "./columns.ts";
import type { Queryable } from "./database.ts";

/** An event as `GET /webhooks/listen` sends it: the delivery body, stored once with the event. */
export interface FedEvent {
  id: string;
  type: EventType;
  body: string;
  createdAt: Date;
}

interface FedRow {
  id: string;
  type: EventType;
  payload: string;
  created_at: Date;
}

/**
 * The brand's events of `mode` created after `after`, oldest first, leaving out `skip` (the ids
 * already sent), at most `limit`. Not kept in the embedded read cache: its time changes each call.
 */
export async function eventsAfter(
  db: Queryable,
  {
    brandId,
    mode,
    after,
    types,
    skip,
    limit,
  }: { brandId: string; mode: Mode; after: Date; types: readonly EventType[]; skip: readonly string[]; limit: number },
): Promise<FedEvent[]> {
  const rows = await db.query<FedRow>(
    `SELECT id, type, payload, created_at FROM webhook_events
     WHERE brand_id = $1 AND mode = $2 AND created_at > $3 AND type = ANY($4::text[]) AND NOT (id = ANY($5::text[]))
     ORDER BY created_at, id LIMIT $6`,
    [brandId, mode, after, types, skip, limit],
  );
  return rows.map((row) => ({ id: row.id, type: row.type, body: row.payload, createdAt: dateOf(row.created_at) }));
}

/** When the brand's event `id` of `mode` was created; null when it has none of that id. */
export async function eventTime(
  db: Queryable,
  { brandId, mode, id }: { brandId: string; mode: Mode; id: string },
): Promise<Date | null> {
  const [row] = await db.query<{ created_at: Date }>(
    "SELECT created_at FROM webhook_events WHERE id = $1 AND brand_id = $2 AND mode = $3",
    [id, brandId, mode],
  );
  return row ? dateOf(row.created_at) : null;
}
