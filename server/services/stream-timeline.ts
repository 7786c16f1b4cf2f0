import { streamTimeline as bounds } from "../../generated/limits.ts";
import { type StreamTimeline, streamTimeline } from "../domain/stream-timeline.ts";
import type { Stream, StreamScope } from "../domain/types.ts";
import { type DeliveryWithTarget, streamDeliveries, streamEvents } from "../store/deliveries.ts";
import type { ServiceContext } from "./context.ts";
import { readStream } from "./streams.ts";

export interface StreamHistory {
  stream: Stream;
  timeline: StreamTimeline;
  /** The deliveries of its events, as many as the contract lists, and how many there are. */
  deliveries: Array<DeliveryWithTarget & { webhookDeleted: boolean }>;
  deliveriesTotal: number;
}

/**
 * One stream of the scope with its timeline and its events' deliveries: 404 as GET /streams/{id}
 * answers it, whose due transitions it applies first, so the timeline is as of now (the scope's
 * clock: a test-mode brand's test clock).
 */
export async function streamHistory(ctx: ServiceContext, scope: StreamScope, id: string): Promise<StreamHistory> {
  const { stream, now } = await readStream(ctx, scope, id);
  const [events, { deliveries, total }] = await Promise.all([
    streamEvents(ctx.db, scope, stream.id, bounds.entries),
    streamDeliveries(ctx.db, { ...scope, streamId: stream.id }, bounds.deliveries),
  ]);
  return {
    stream,
    timeline: streamTimeline(stream, events, now, bounds.entries),
    deliveries,
    deliveriesTotal: total,
  };
}
