import type { DeliveryStatus, EventType, WebhookDelivery } from "../domain/types.ts";
import { dateOf, dateOrNull } from "./columns.ts";
import type { Queryable } from "./database.ts";

interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  type: EventType;
  stream_id: string;
  url: string;
  attempt: number;
  status: DeliveryStatus;
  response_status: number | null;
  error: string | null;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  created_at: Date;
}

/** A delivery with what a partner's view of it names too: the webhook's URL and the event's stream. */
export interface DeliveryWithTarget extends WebhookDelivery {
  url: string;
  streamId: string;
}

/**
 * A delivery as the operator sees it, from the deliveries written so far and, for events the
 * worker has not expanded yet, the deliveries they will become: pending, attempt 0, under the id
 * they will have (`webhook_delivery_id`), so the list does not depend on how far the worker got.
 */
const DELIVERIES = `
  SELECT d.id, d.webhook_id, d.event_id, e.type, e.stream_id, d.attempt, d.status, d.response_status, d.error, d.next_attempt_at, d.last_attempt_at, d.created_at
  FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id`;
const DELIVERIES_TO_COME = `
  SELECT webhook_delivery_id(e.id, w.id) AS id, w.id AS webhook_id, e.id AS event_id, e.type, e.stream_id, 0 AS attempt, 'pending' AS status,
         NULL::int AS response_status, NULL::text AS error, e.created_at AS next_attempt_at, NULL::timestamptz AS last_attempt_at, e.created_at
  FROM webhook_events e CROSS JOIN LATERAL unnest(e.pending_webhook_ids) AS w (id)`;

export interface DeliveryFilter {
  brandId: string;
  webhookId?: string;
  status?: string;
  mode?: string;
  streamId?: string;
}

/** How many deliveries listDeliveries would list for `filter` without a page (GET /webhooks/deliveries' `total`). */
export async function countDeliveries(db: Queryable, filter: DeliveryFilter): Promise<number> {
  const { sql, params } = filteredDeliveries(filter);
  const rows = await db.query<{ total: string | number }>(
    `SELECT count(*) AS total FROM (${sql}) d JOIN webhooks w ON w.id = d.webhook_id`,
    params,
  );
  return Number(rows[0]?.total ?? 0);
}

/** The deliveries written and those still to come that match `filter`, as one query (unordered). */
function filteredDeliveries(filter: DeliveryFilter): { sql: string; params: unknown[] } {
  const params: unknown[] = [filter.brandId];
  let written = "d.brand_id = $1";
  let toCome = "e.pending_webhook_ids IS NOT NULL AND e.brand_id = $1";
  // The partner's view (GET /webhooks/deliveries): one mode, optionally one stream's events.
  if (filter.mode) {
    const at = params.push(filter.mode);
    written += ` AND e.mode = $${at}`;
    toCome += ` AND e.mode = $${at}`;
  }
  if (filter.streamId) {
    const at = params.push(filter.streamId);
    written += ` AND e.stream_id = $${at}`;
    toCome += ` AND e.stream_id = $${at}`;
  }
  if (filter.webhookId) {
    const at = params.push(filter.webhookId);
    written += ` AND d.webhook_id = $${at}`;
    toCome += ` AND w.id = $${at}`;
  }
  if (filter.status) written += ` AND d.status = $${params.push(filter.status)}`;
  const withToCome = !filter.status || filter.status === "pending";
  return {
    sql: `${DELIVERIES} WHERE ${written}${withToCome ? ` UNION ALL ${DELIVERIES_TO_COME} WHERE ${toCome}` : ""}`,
    params,
  };
}

/** The operator's read-only view of a brand's deliveries, newest first. */
export async function listDeliveries(
  db: Queryable,
  filter: DeliveryFilter & { limit?: number; offset?: number },
): Promise<DeliveryWithTarget[]> {
  const { sql, params } = filteredDeliveries(filter);
  const rows = await db.query<DeliveryRow>(
    `SELECT d.*, w.url FROM (${sql}) d
     JOIN webhooks w ON w.id = d.webhook_id
     ORDER BY d.created_at DESC, d.id LIMIT ${filter.limit ?? 500} OFFSET ${filter.offset ?? 0}`,
    params,
  );
  return rows.map((row) => ({ ...deliveryFromRow(row), url: row.url, streamId: row.stream_id }));
}

function deliveryFromRow(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    eventId: row.event_id,
    eventType: row.type,
    attempt: row.attempt,
    status: row.status,
    responseStatus: row.response_status,
    error: row.error,
    nextAttemptAt: dateOrNull(row.next_attempt_at),
    lastAttemptAt: dateOrNull(row.last_attempt_at),
    createdAt: dateOf(row.created_at),
  };
}

/** One delivery (written or to come), and whether its webhook was deleted since; null when there is none. */
export async function findDelivery(
  db: Queryable,
  id: string,
): Promise<{ delivery: WebhookDelivery; webhookDeleted: boolean } | null> {
  const [row] = await db.query<DeliveryRow & { deleted_at: Date | null }>(
    `SELECT d.*, w.deleted_at FROM (
       ${DELIVERIES} WHERE d.id = $1
       UNION ALL ${DELIVERIES_TO_COME} WHERE e.pending_webhook_ids IS NOT NULL AND webhook_delivery_id(e.id, w.id) = $1
     ) d JOIN webhooks w ON w.id = d.webhook_id
     LIMIT 1`,
    [id],
  );
  return row ? { delivery: deliveryFromRow(row), webhookDeleted: row.deleted_at !== null } : null;
}

/**
 * Makes a failed delivery of a live webhook pending and due at `now`; the attempt count stays, so
 * the next attempt is numbered after the last. Null when the delivery is not in that state.
 */
export async function retryFailedDelivery(db: Queryable, id: string, now: Date): Promise<WebhookDelivery | null> {
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
  return row ? deliveryFromRow(row) : null;
}

export interface AttemptRow {
  attempt: number;
  attemptedAt: Date;
  signatureT: number;
  responseStatus: number | null;
  /** The start of the receiver's answer (1 KiB at most), as text; null when it gave none. */
  responseBody: string | null;
  error: string | null;
  durationMs: number | null;
}

/**
 * One delivery of the webhook (in the brand), with the event's body as sent, the webhook's secret
 * (to show each attempt's signature again) and every attempt, oldest first.
 */
export async function deliveryWithAttempts(
  db: Queryable,
  filter: { brandId: string; webhookId: string; deliveryId: string },
): Promise<{ delivery: WebhookDelivery; payload: string; secret: string; attempts: AttemptRow[] } | null> {
  const [delivery] = (
    await listDeliveries(db, { brandId: filter.brandId, webhookId: filter.webhookId, limit: 100_000 })
  ).filter((one) => one.id === filter.deliveryId);
  if (!delivery) return null;
  const [event] = await db.query<{ payload: string; secret: string }>(
    `SELECT e.payload, w.secret FROM webhook_events e JOIN webhooks w ON w.id = $2 WHERE e.id = $1 AND e.brand_id = $3`,
    [delivery.eventId, filter.webhookId, filter.brandId],
  );
  if (!event) return null;
  const rows = await db.query<{
    attempt: number;
    attempted_at: Date | string;
    signature_t: string | number;
    response_status: number | null;
    error: string | null;
    duration_ms: number | null;
    response_body: string | null;
  }>(
    `SELECT attempt, attempted_at, signature_t, response_status, response_body, error, duration_ms FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt`,
    [delivery.id],
  );
  const attempts = rows.map((row) => ({
    attempt: row.attempt,
    attemptedAt: dateOf(row.attempted_at),
    signatureT: Number(row.signature_t),
    responseStatus: row.response_status,
    responseBody: row.response_body,
    error: row.error,
    durationMs: row.duration_ms,
  }));
  return { delivery, payload: event.payload, secret: event.secret, attempts };
}

/** An event of a stream, as its timeline shows it. */
export interface StreamEventRow {
  id: string;
  type: EventType;
  createdAt: Date;
}

/** The stream's events (in its brand and mode), oldest first, at most `limit`. */
export async function streamEvents(
  db: Queryable,
  scope: { brandId: string; mode: string },
  streamId: string,
  limit: number,
): Promise<StreamEventRow[]> {
  const rows = await db.query<{ id: string; type: EventType; created_at: Date | string }>(
    `SELECT id, type, created_at FROM webhook_events WHERE stream_id = $1 AND brand_id = $2 AND mode = $3
     ORDER BY created_at, id LIMIT $4`,
    [streamId, scope.brandId, scope.mode, limit],
  );
  return rows.map((row) => ({ id: row.id, type: row.type, createdAt: dateOf(row.created_at) }));
}

/**
 * The deliveries (written and to come) of the stream's events, oldest event first and each
 * event's in the order of its webhooks, at most `limit`; and how many there are. Each names its
 * webhook's URL and whether that webhook was deleted since.
 */
export async function streamDeliveries(
  db: Queryable,
  filter: { brandId: string; mode: string; streamId: string },
  limit: number,
): Promise<{ deliveries: Array<DeliveryWithTarget & { webhookDeleted: boolean }>; total: number }> {
  const { sql, params } = filteredDeliveries(filter);
  const [rows, total] = await Promise.all([
    db.query<DeliveryRow & { webhook_deleted: boolean }>(
      `SELECT d.*, w.url, w.deleted_at IS NOT NULL AS webhook_deleted FROM (${sql}) d
       JOIN webhooks w ON w.id = d.webhook_id
       ORDER BY d.created_at, d.event_id, w.created_at, w.id LIMIT $${params.length + 1}`,
      [...params, limit],
    ),
    countDeliveries(db, filter),
  ]);
  return {
    deliveries: rows.map((row) => ({
      ...deliveryFromRow(row),
      url: row.url,
      streamId: row.stream_id,
      webhookDeleted: row.webhook_deleted,
    })),
    total,
  };
}
