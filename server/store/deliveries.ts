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
  return rows.map((row) => ({
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
  }));
}
