import {
  type DeliveryAttempt,
  type DeliveryStatus,
  type EventType,
  WEBHOOK_ATTEMPTS,
  WEBHOOK_DELIVERIES,
  type WebhookDelivery,
} from "../domain/types.ts";
import { dateOf } from "./columns.ts";
import { clockOffsetSql } from "./test-clocks.ts";
import type { Queryable } from "./database.ts";
import { named, readRow, selectList } from "./statements.ts";

/** A delivery's row, with what the statements below join to it. */
type DeliveryRow = Record<string, unknown> & { stream_id: string; url: string };

const deliveryFromRow = (row: object): WebhookDelivery => readRow(WEBHOOK_DELIVERIES, row);

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
  SELECT d.id, d.webhook_id, d.event_id, e.type AS event_type, e.stream_id, d.attempt, d.status, d.response_status, d.error, d.next_attempt_at, d.last_attempt_at, d.created_at
  FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id`;
const DELIVERIES_TO_COME = `
  SELECT webhook_delivery_id(e.id, w.id) AS id, w.id AS webhook_id, e.id AS event_id, e.type AS event_type, e.stream_id, 0 AS attempt, 'pending' AS status,
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

/**
 * The filters that apply to deliveries written and to come alike, and the column each compares in
 * either: the partner's view (GET /webhooks/deliveries) gives a mode and maybe a stream, the
 * operator's a webhook, a delivery's page its id.
 */
const FILTERED: ReadonlyArray<
  [field: "mode" | "streamId" | "webhookId" | "deliveryId", written: string, toCome: string]
> = [
  ["mode", "e.mode", "e.mode"],
  ["streamId", "e.stream_id", "e.stream_id"],
  ["webhookId", "d.webhook_id", "w.id"],
  ["deliveryId", "d.id", "webhook_delivery_id(e.id, w.id)"],
];

/** The deliveries written and those still to come that match `filter`, as one query (unordered). */
function filteredDeliveries(filter: DeliveryFilter): { sql: string; params: unknown[] } {
  const params: unknown[] = [filter.brandId];
  let written = "d.brand_id = $1";
  let toCome = "e.pending_webhook_ids IS NOT NULL AND e.brand_id = $1";
  for (const [field, writtenColumn, toComeColumn] of FILTERED) {
    const value = filter[field];
    if (!value) continue;
    const at = params.push(value);
    written += ` AND ${writtenColumn} = $${at}`;
    toCome += ` AND ${toComeColumn} = $${at}`;
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
  next_attempt_at = $now::timestamptz + ${clockOffsetSql("d.brand_id", mode)},
  series_trigger = $trigger, series_requested_by = $requestedBy, series_request = $requestId`;

type SendAgainValues = SendAgainRequest & { now: Date };

const SEND_AGAIN = named<
  SendAgainValues & {
    deliveryId: string;
    brandId: string | null;
    mode: string | null;
    statuses: readonly DeliveryStatus[] | null;
  }
>(
  `WITH again AS (
     UPDATE webhook_deliveries d SET ${sendAgain("e.mode")}
     FROM webhooks w, webhook_events e
     WHERE d.id = $deliveryId AND w.id = d.webhook_id AND w.deleted_at IS NULL AND e.id = d.event_id
       AND ($brandId::uuid IS NULL OR d.brand_id = $brandId) AND ($mode::text IS NULL OR e.mode = $mode)
       AND ($statuses::text[] IS NULL OR d.status = ANY ($statuses::text[]))
     RETURNING d.*
   )
   SELECT a.*, e.type AS event_type FROM again a JOIN webhook_events e ON e.id = a.event_id`,
);

const RECOVER_FAILED = named<
  SendAgainValues & { webhookId: string; since: Date; brandId: string; mode: string; limit: number }
>(
  `WITH picked AS (
     SELECT d.id, row_number() OVER (ORDER BY d.created_at, d.id) AS place
     FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
     WHERE d.webhook_id = $webhookId AND d.status = 'failed' AND d.created_at >= $since AND d.brand_id = $brandId AND e.mode = $mode
     ORDER BY d.created_at, d.id
     LIMIT $limit + 1
   ),
   queued AS (
     UPDATE webhook_deliveries d SET ${sendAgain("$mode::text")}
     -- Re-checked on the locked row: a recover or retry that committed meanwhile took it already.
     FROM picked p WHERE d.id = p.id AND p.place <= $limit AND d.status = 'failed'
     RETURNING 1
   )
   SELECT (SELECT count(*) FROM queued) AS queued, (SELECT count(*) FROM picked) AS picked`,
);

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
  const [row] = await db.query(
    SEND_AGAIN.text,
    SEND_AGAIN.params({
      brandId: null,
      mode: null,
      statuses: null,
      ...target,
      ...request,
      now,
    }),
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
    RECOVER_FAILED.text,
    RECOVER_FAILED.params({ ...target, ...request, now }),
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

/**
 * One delivery of the brand (of one webhook or mode, when given), with the event's body as sent,
 * the webhook's secret (to show each attempt's signature again) and every attempt, oldest first.
 */
export async function deliveryWithAttempts(
  db: Queryable,
  filter: { brandId: string; deliveryId: string; webhookId?: string; mode?: string },
): Promise<{ delivery: DeliveryWithTarget; payload: string; secret: string; attempts: DeliveryAttempt[] } | null> {
  const [delivery] = await listDeliveries(db, { ...filter, limit: 1 });
  if (!delivery) return null;
  const [event] = await db.query<{ payload: string; secret: string }>(
    `SELECT e.payload, w.secret FROM webhook_events e JOIN webhooks w ON w.id = $2 WHERE e.id = $1 AND e.brand_id = $3`,
    [delivery.eventId, delivery.webhookId, filter.brandId],
  );
  if (!event) return null;
  const rows = await db.query(
    `SELECT ${ATTEMPT_COLUMNS} FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempted_at, series, attempt`,
    [delivery.id],
  );
  const attempts = rows.map((row) => readRow(WEBHOOK_ATTEMPTS, row));
  return { delivery, payload: event.payload, secret: event.secret, attempts };
}

const ATTEMPT_COLUMNS = selectList(WEBHOOK_ATTEMPTS);

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
