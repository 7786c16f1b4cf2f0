import type { Queryable } from "./database.ts";

export interface DeliveryView {
  delivery_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status: "pending" | "succeeded" | "failed";
  response_status: number | null;
  error: string | null;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  created_at: string;
}

interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  type: string;
  attempt: number;
  status: DeliveryView["status"];
  response_status: number | null;
  error: string | null;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  created_at: Date;
}

const iso = (value: Date | null) => (value === null ? null : new Date(value).toISOString());

/** The operator's read-only view of a brand's deliveries, newest first. */
export async function listDeliveries(
  db: Queryable,
  filter: { brandId: string; webhookId?: string; status?: string; limit?: number },
): Promise<DeliveryView[]> {
  const params: unknown[] = [filter.brandId];
  let where = "d.brand_id = $1";
  if (filter.webhookId) where += ` AND d.webhook_id = $${params.push(filter.webhookId)}`;
  if (filter.status) where += ` AND d.status = $${params.push(filter.status)}`;
  const rows = await db.query<DeliveryRow>(
    `SELECT d.*, e.type FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
     WHERE ${where} ORDER BY d.created_at DESC, d.id LIMIT ${filter.limit ?? 500}`,
    params,
  );
  return rows.map(viewFromRow);
}

function viewFromRow(row: DeliveryRow): DeliveryView {
  return {
    delivery_id: row.id,
    webhook_id: row.webhook_id,
    event_id: row.event_id,
    event_type: row.type,
    attempt: row.attempt,
    status: row.status,
    response_status: row.response_status,
    error: row.error,
    next_attempt_at: iso(row.next_attempt_at),
    last_attempt_at: iso(row.last_attempt_at),
    created_at: iso(row.created_at)!,
  };
}

/** One delivery, and whether its webhook was deleted since; null when there is none. */
export async function findDelivery(db: Queryable, id: string): Promise<{ delivery: DeliveryView; webhookDeleted: boolean } | null> {
  const [row] = await db.query<DeliveryRow & { deleted_at: Date | null }>(
    `SELECT d.*, e.type, w.deleted_at FROM webhook_deliveries d
     JOIN webhook_events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id
     WHERE d.id = $1`,
    [id],
  );
  return row ? { delivery: viewFromRow(row), webhookDeleted: row.deleted_at !== null } : null;
}

/**
 * Makes a failed delivery of a live webhook pending and due at `now`; the attempt count stays, so
 * the next attempt is numbered after the last. Null when the delivery is not in that state.
 */
export async function retryFailedDelivery(db: Queryable, id: string, now: Date): Promise<DeliveryView | null> {
  const [row] = await db.query<DeliveryRow>(
    `WITH retried AS (
       UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = $2
       FROM webhooks w
       WHERE d.id = $1 AND d.status = 'failed' AND w.id = d.webhook_id AND w.deleted_at IS NULL
       RETURNING d.*
     )
     SELECT r.*, e.type FROM retried r JOIN webhook_events e ON e.id = r.event_id`,
    [id, now],
  );
  return row ? viewFromRow(row) : null;
}
