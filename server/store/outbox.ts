import type { StreamEvent } from "../domain/types.ts";
import type { Queryable } from "./database.ts";

/**
 * Records an event, with `body` (what its deliveries send), and the ids of the webhooks of the
 * stream's brand and mode subscribed to its type at this moment: one row whatever the number of
 * webhooks, so the request that changes the stream does not slow down as a brand adds webhooks.
 * The delivery worker expands it into one delivery per webhook (`fanOutEvents`). Called inside
 * the transaction of the state change, so an event exists exactly when the change was committed,
 * even if the process dies right after; a webhook registered later does not receive it, one
 * deleted later gets a delivery that is not sent (as the operator sees).
 */
export async function insertEvent(db: Queryable, { event, body }: EventRecord): Promise<void> {
  await db.query(eventInsert({ first: 1 }), eventParameters({ event, body }));
}

/** An event and the body its deliveries send. */
export interface EventRecord {
  event: StreamEvent;
  body: string;
}

/**
 * The INSERT of `insertEvent`, its parameters numbered from `$first` (as `eventParameters` lists
 * them), so a store statement can record the event of the change it makes in the same statement:
 * `from` names the CTE whose one row (the change made) lets the event be written; without a row
 * there, no event.
 */
export function eventInsert({ first, from }: { first: number; from?: string }): string {
  const [id, brand, mode, type, stream, payload, createdAt] = Array.from(
    { length: 7 },
    (_, index) => `$${first + index}`,
  );
  return `INSERT INTO webhook_events (id, brand_id, mode, type, stream_id, payload, created_at, pending_webhook_ids)
     SELECT ${id}::text, ${brand}::uuid, ${mode}::text, ${type}::text, ${stream}::uuid, ${payload}::text, ${createdAt}::timestamptz, (
       SELECT array_agg(w.id ORDER BY w.created_at, w.id) FROM webhooks w
       WHERE w.brand_id = ${brand}::uuid AND w.mode = ${mode}::text AND w.deleted_at IS NULL AND ${type}::text = ANY(w.events)
     )${from ? ` FROM ${from}` : ""}`;
}

/** The parameters of `eventInsert`, in its order. */
export function eventParameters({ event, body }: EventRecord): unknown[] {
  const { stream } = event;
  return [event.id, stream.brandId, stream.mode, event.type, stream.id, body, event.createdAt];
}

/**
 * Expands the oldest events still to expand into their pending deliveries (due at the event's
 * time), in one statement: whole events, until about `maxDeliveries` deliveries are written (at
 * least one event, however many webhooks it has), so one call stays short beside the requests
 * sharing the database. SKIP LOCKED lets several processes expand side by side, each event once.
 * Returns the events expanded.
 */
export async function fanOutEvents(
  db: Queryable,
  { maxEvents = 500, maxDeliveries = 500 }: { maxEvents?: number; maxDeliveries?: number } = {},
): Promise<number> {
  const [row] = await db.query<{ events: number }>(
    `WITH oldest AS (
       SELECT id, sum(cardinality(pending_webhook_ids)) OVER (ORDER BY created_at, id) - cardinality(pending_webhook_ids) AS before
       FROM webhook_events WHERE pending_webhook_ids IS NOT NULL
       ORDER BY created_at, id
       LIMIT $1
     ),
     -- The condition is repeated on the locked row: an event another process expanded meanwhile
     -- is re-checked on its newest version and skipped.
     batch AS (
       SELECT e.id, e.brand_id, e.created_at, e.pending_webhook_ids FROM webhook_events e
       WHERE e.id = ANY (ARRAY(SELECT id FROM oldest WHERE before < $2)) AND e.pending_webhook_ids IS NOT NULL
       FOR UPDATE SKIP LOCKED
     ),
     expanded AS (
       UPDATE webhook_events e SET pending_webhook_ids = NULL FROM batch WHERE e.id = batch.id
       RETURNING e.id
     ),
     deliveries AS (
       INSERT INTO webhook_deliveries (id, event_id, webhook_id, brand_id, status, attempt, next_attempt_at, created_at)
       SELECT webhook_delivery_id(b.id, w.id), b.id, w.id, b.brand_id, 'pending', 0, b.created_at, b.created_at
       FROM batch b CROSS JOIN LATERAL unnest(b.pending_webhook_ids) AS w (id)
       ON CONFLICT (event_id, webhook_id) DO NOTHING
     )
     SELECT count(*)::int AS events FROM expanded`,
    [maxEvents, maxDeliveries],
  );
  return Number(row?.events ?? 0);
}
