import { randomUUID } from "node:crypto";
import type { EventType, Stream, StreamEvent } from "../domain/types.ts";
import { webhookEvent } from "../presenters/webhook-event.ts";
import type { Queryable } from "../store/database.ts";
import { type EventRecord, insertEvent } from "../store/outbox.ts";

/**
 * The event that `stream`, as it is now, had an event of `type` at `at`, with the body its
 * deliveries will send, built once, here, and stored: every attempt signs and sends the same
 * bytes, however long the retries last. The store writes it in the transaction of the state
 * change (often in the same statement), so the event exists exactly when the change was committed.
 */
export function streamEventRecord(type: EventType, stream: Stream, at: Date): EventRecord {
  const event: StreamEvent = { id: `evt_${randomUUID().replace(/-/g, "")}`, type, stream, createdAt: at };
  return { event, body: JSON.stringify(webhookEvent(event)) };
}

/** Records `streamEventRecord(type, stream, at)` for the brand's webhooks subscribed to it, inside the state change's transaction. */
export async function recordStreamEvent(tx: Queryable, type: EventType, stream: Stream, at: Date): Promise<void> {
  await insertEvent(tx, streamEventRecord(type, stream, at));
}
