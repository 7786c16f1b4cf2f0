import type { DeliveryStatus, EventType, WebhookDelivery } from "../domain/types.ts";
import { dateOf, dateOrNull } from "./columns.ts";
import { clockOffsetSql } from "./test-clocks.ts";
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
  /** One delivery, by its id. */
  deliveryId?: string;
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
  if (filter.deliveryId) {
    const at = params.push(filter.deliveryId);
    written += ` AND d.id = $${at}`;
    toCome += ` AND webhook_delivery_id(e.id, w.id) = $${at}`;
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

/** What asked for a delivery to be sent again: the first attempt of its new series records it. */
export interface SendAgainRequest {
  trigger: "retry" | "recover" | "operator";
  /** The API key as listed (`svc_test_…abcd`), or `operator`. */
  requestedBy: string;
  /** The call that asked (one id for every delivery a recover queues). */
  requestId: string;
}

/**
 * The SET of a delivery sent again: the first attempt of the new series due at `$2` (the real
 * time) on the clock of the delivery's scope: in test mode (`mode`, an SQL expression), its brand's
 * test clock (migration 032), so its attempts follow on from those before.
 */
const sendAgain = (mode: string) => `status = 'pending', series = d.series + 1, attempt = 0,
  next_attempt_at = $2::timestamptz + ${clockOffsetSql("d.brand_id", mode)},
  series_trigger = $3, series_requested_by = $4, series_request = $5`;

/**
 * Sends a written delivery of a webhook not deleted again: a new series of attempts (the retry
 * schedule anew), the first due at `now` (on the brand's test clock in test mode: sendAgain).
 * `statuses` limits which deliveries may be; `mode` the event's mode (the partner's key). Null when no delivery fits. An attempt in flight meanwhile
 * records its row in the old series and changes nothing else (recordAttempts).
 */
export async function sendDeliveryAgain(
  db: Queryable,
  target: { deliveryId: string; brandId?: string; mode?: string; statuses?: readonly DeliveryStatus[] },
  request: SendAgainRequest,
  now: Date,
): Promise<WebhookDelivery | null> {
  const [row] = await db.query<DeliveryRow>(
    `WITH again AS (
       UPDATE webhook_deliveries d SET ${sendAgain("e.mode")}
       FROM webhooks w, webhook_events e
       WHERE d.id = $1 AND w.id = d.webhook_id AND w.deleted_at IS NULL AND e.id = d.event_id
         AND ($6::uuid IS NULL OR d.brand_id = $6) AND ($7::text IS NULL OR e.mode = $7)
         AND ($8::text[] IS NULL OR d.status = ANY ($8::text[]))
       RETURNING d.*
     )
     SELECT a.*, e.type FROM again a JOIN webhook_events e ON e.id = a.event_id`,
    [
      target.deliveryId,
      now,
      request.trigger,
      request.requestedBy,
      request.requestId,
      target.brandId ?? null,
      target.mode ?? null,
      target.statuses ?? null,
    ],
  );
  return row ? deliveryFromRow(row) : null;
}

/**
 * Sends the webhook's failed deliveries created since `since` again (sendDeliveryAgain), the
 * oldest first, at most `limit`; says how many, and whether more are left for another call.
 */
export async function recoverFailedDeliveries(
  db: Queryable,
  target: { brandId: string; mode: string; webhookId: string; since: Date; limit: number },
  request: SendAgainRequest,
  now: Date,
): Promise<{ queued: number; hasMore: boolean }> {
  const [row] = await db.query<{ queued: string | number; picked: string | number }>(
    `WITH picked AS (
       SELECT d.id, row_number() OVER (ORDER BY d.created_at, d.id) AS place
       FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
       WHERE d.webhook_id = $1 AND d.status = 'failed' AND d.created_at >= $6 AND d.brand_id = $7 AND e.mode = $8
       ORDER BY d.created_at, d.id
       LIMIT $9 + 1
     ),
     queued AS (
       UPDATE webhook_deliveries d SET ${sendAgain("$8::text")}
       -- Re-checked on the locked row: a recover or retry that committed meanwhile took it already.
       FROM picked p WHERE d.id = p.id AND p.place <= $9 AND d.status = 'failed'
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM queued) AS queued, (SELECT count(*) FROM picked) AS picked`,
    [
      target.webhookId,
      now,
      request.trigger,
      request.requestedBy,
      request.requestId,
      target.since,
      target.brandId,
      target.mode,
      target.limit,
    ],
  );
  return { queued: Number(row?.queued ?? 0), hasMore: Number(row?.picked ?? 0) > target.limit };
}

/** Whether the webhook still has failed deliveries created since `since` (what a recover would queue). */
export async function hasFailedDeliveries(db: Queryable, webhookId: string, since: Date): Promise<boolean> {
  const rows = await db.query(
    `SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'failed' AND created_at >= $2 LIMIT 1`,
    [webhookId, since],
  );
  return rows.length > 0;
}

/** How many deliveries the call `requestId` sent again (an Idempotency-Key replay of a recover). */
export async function countSentAgain(db: Queryable, requestId: string): Promise<number> {
  const [row] = await db.query<{ n: string | number }>(
    `SELECT count(*) AS n FROM webhook_deliveries WHERE series_request = $1`,
    [requestId],
  );
  return Number(row?.n ?? 0);
}

export interface AttemptRow {
  /** The series of the attempt: 0 from the event, one more each time the delivery is sent again. */
  series: number;
  attempt: number;
  attemptedAt: Date;
  signatureT: number;
  responseStatus: number | null;
  /** The start of the receiver's answer (1 KiB at most), as text; null when it gave none. */
  responseBody: string | null;
  error: string | null;
  durationMs: number | null;
  /** What asked for the attempt's series, on its first attempt: `retry`, `recover`, `operator`; null otherwise. */
  trigger: string | null;
  requestedBy: string | null;
}

/**
 * One delivery of the brand (of one webhook or mode, when given), with the event's body as sent,
 * the webhook's secret (to show each attempt's signature again) and every attempt, oldest first.
 */
export async function deliveryWithAttempts(
  db: Queryable,
  filter: { brandId: string; deliveryId: string; webhookId?: string; mode?: string },
): Promise<{ delivery: DeliveryWithTarget; payload: string; secret: string; attempts: AttemptRow[] } | null> {
  const [delivery] = await listDeliveries(db, { ...filter, limit: 1 });
  if (!delivery) return null;
  const [event] = await db.query<{ payload: string; secret: string }>(
    `SELECT e.payload, w.secret FROM webhook_events e JOIN webhooks w ON w.id = $2 WHERE e.id = $1 AND e.brand_id = $3`,
    [delivery.eventId, delivery.webhookId, filter.brandId],
  );
  if (!event) return null;
  const rows = await db.query<{
    series: number;
    attempt: number;
    attempted_at: Date | string;
    signature_t: string | number;
    response_status: number | null;
    error: string | null;
    duration_ms: number | null;
    response_body: string | null;
    trigger: string | null;
    requested_by: string | null;
  }>(
    `SELECT series, attempt, attempted_at, signature_t, response_status, response_body, error, duration_ms, trigger, requested_by
     FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempted_at, series, attempt`,
    [delivery.id],
  );
  const attempts = rows.map((row) => ({
    series: Number(row.series),
    attempt: row.attempt,
    attemptedAt: dateOf(row.attempted_at),
    signatureT: Number(row.signature_t),
    responseStatus: row.response_status,
    responseBody: row.response_body,
    error: row.error,
    durationMs: row.duration_ms,
    trigger: row.trigger,
    requestedBy: row.requested_by,
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
