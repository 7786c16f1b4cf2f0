import type { components } from "../../generated/api.ts";
import type { StreamEvent } from "../domain/types.ts";

/**
 * The body of a webhook delivery, the contract's `WebhookEvent`. It is a wire shape like the HTTP
 * responses (http/response-bodies.ts) but leaves the server through the delivery worker, not Express,
 * and is built by the services that record events: so it lives outside http/.
 */
export function webhookEvent(event: StreamEvent): components["schemas"]["WebhookEvent"] {
  const { stream } = event;
  return {
    id: event.id,
    type: event.type,
    created_at: event.createdAt.toISOString(),
    data: {
      stream_id: stream.id,
      status: stream.status,
      creator_id: stream.creatorPublicId,
      platform: stream.platform,
      vertical: stream.vertical,
    },
  };
}
