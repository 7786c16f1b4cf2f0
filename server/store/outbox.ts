import { randomUUID } from "node:crypto";
import type { EventType, Stream } from "../domain/types.ts";
import type { Queryable } from "./database.ts";

export interface WebhookEventPayload {
  id: string;
  type: EventType;
  created_at: string;
  data: { stream_id: string; status: string; creator_id: string | null; platform: string; vertical: string };
}

export function eventPayload(id: string, type: EventType, stream: Stream, at: Date): WebhookEventPayload {
  return {
    id,
    type,
    created_at: at.toISOString(),
    data: {
      stream_id: stream.id,
      status: stream.status,
      creator_id: stream.creatorPublicId,
      platform: stream.platform,
      vertical: stream.vertical,
    },
  };
}

/**
 * Records an event and one pending delivery per subscribed webhook of the stream's brand and
 * mode, in one statement whatever the number of webhooks. Called inside the transaction of the
 * state change, so an event exists exactly when the change was committed, even if the process
 * dies right after.
 */
export async function recordEvent(db: Queryable, type: EventType, stream: Stream, at: Date): Promise<WebhookEventPayload> {
  const payload = eventPayload(`evt_${randomUUID().replace(/-/g, "")}`, type, stream, at);
  await db.query(
    `WITH event AS (
       INSERT INTO webhook_events (id, brand_id, mode, type, stream_id, payload, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
       RETURNING id
     )
     INSERT INTO webhook_deliveries (id, event_id, webhook_id, brand_id, status, attempt, next_attempt_at, created_at)
     SELECT gen_random_uuid(), event.id, w.id, w.brand_id, 'pending', 0, $7, $7
     FROM event, webhooks w
     WHERE w.brand_id = $2 AND w.mode = $3 AND w.deleted_at IS NULL AND $4 = ANY(w.events)`,
    [payload.id, stream.brandId, stream.mode, type, stream.id, JSON.stringify(payload), at],
  );
  return payload;
}
