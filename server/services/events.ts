import { randomUUID } from "node:crypto";
import type { EventType, Stream, StreamEvent } from "../domain/types.ts";
import { webhookEvent } from "../presenters/webhook-event.ts";
import type { Queryable } from "../store/database.ts";
import { insertEvent } from "../store/outbox.ts";

/**
 * Records that `stream`, as it is now, had an event of `type` at `at`, for the brand's webhooks
 * subscribed to it. Runs in the transaction of the state change, so the event exists exactly
 * when the change was committed. The body is built once, here, and stored: every attempt signs
 * and sends the same bytes, however long the retries last.
 */
export async function recordStreamEvent(tx: Queryable, type: EventType, stream: Stream, at: Date): Promise<void> {
  const event: StreamEvent = { id: `evt_${randomUUID().replace(/-/g, "")}`, type, stream, createdAt: at };
  await insertEvent(tx, event, JSON.stringify(webhookEvent(event)));
}
