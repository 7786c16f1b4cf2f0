import type { TimelineEntry } from "../../../domain/stream-timeline.ts";
import type { ServiceContext } from "../../../services/context.ts";
import { streamHistory } from "../../../services/stream-timeline.ts";
import type { OperationHandlers } from "../../dispatch.ts";
import { tenancyOf } from "../../tenancy.ts";
import { deliveryOutcome } from "./response-bodies.ts";

function presentEntry(entry: TimelineEntry) {
  const at = entry.at.toISOString();
  switch (entry.kind) {
    case "status":
      return { kind: entry.kind, at, status: entry.status };
    case "billing":
      return { kind: entry.kind, at, action: entry.action, amount_cents: entry.amountCents, minutes: entry.minutes };
    case "event":
      return { kind: entry.kind, at, event_id: entry.eventId, event_type: entry.eventType };
  }
}

/** A stream's timeline: its status changes, billing, webhook events and their deliveries. */
export function timelineHandlers(ctx: ServiceContext): OperationHandlers<"dashboardGetStreamTimeline"> {
  return {
    async dashboardGetStreamTimeline(req, res) {
      const { stream, timeline, deliveries, deliveriesTotal } = await streamHistory(
        ctx,
        tenancyOf(req, res),
        req.params.id,
      );
      const { billing } = timeline;
      res.json({
        stream_id: stream.id,
        mode: stream.mode,
        status: stream.status,
        duration_seconds: timeline.durationSeconds,
        billing: {
          billed: billing.billed,
          price_per_minute_cents: billing.pricePerMinuteCents,
          hold_cents: billing.holdCents,
          billed_minutes: billing.billedMinutes,
          charged_cents: billing.chargedCents,
          settled: billing.settled,
        },
        entries: timeline.entries.map(presentEntry),
        deliveries: deliveries.map((delivery) => ({
          delivery_id: delivery.id,
          event_id: delivery.eventId,
          webhook_id: delivery.webhookId,
          url: delivery.url,
          webhook_deleted: delivery.webhookDeleted,
          ...deliveryOutcome(delivery),
        })),
        deliveries_total: deliveriesTotal,
      });
    },
  };
}
