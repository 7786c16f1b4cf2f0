/** The brand's webhooks of one mode, read-only (spec §6: registered and managed only through the API), and their deliveries. */
import { signWebhookPayload } from "../../../../sdk/webhooks.ts";
import { isUuid } from "../../../domain/ids.ts";
import type { Tenancy } from "../../../domain/types.ts";
import { ApiError } from "../../../domain/errors.ts";
import type { ServiceContext } from "../../../services/context.ts";
import { brandWebhooks } from "../../../services/webhooks.ts";
import { countDeliveries, deliveryWithAttempts, listDeliveries } from "../../../store/deliveries.ts";
import type { OperationHandlers } from "../../dispatch.ts";
import { deliveryAttempt, webhookSummary } from "../../response-bodies.ts";
import { tenancyOf } from "../../tenancy.ts";
import { presentDelivery } from "./response-bodies.ts";

async function ownWebhook(ctx: ServiceContext, tenancy: Tenancy, id: string): Promise<string> {
  const owned = isUuid(id) && (await brandWebhooks(ctx, tenancy)).some((webhook) => webhook.id === id);
  if (!owned) throw new ApiError("not_found", `No webhook with id ${id}.`);
  return id;
}

export function webhookViewHandlers(
  ctx: ServiceContext,
): OperationHandlers<"dashboardListWebhooks" | "dashboardListDeliveries" | "dashboardGetDelivery"> {
  return {
    async dashboardListWebhooks(req, res) {
      res.json({ webhooks: (await brandWebhooks(ctx, tenancyOf(req, res))).map(webhookSummary) });
    },

    async dashboardListDeliveries(req, res) {
      const tenancy = tenancyOf(req, res);
      const webhookId = await ownWebhook(ctx, tenancy, req.params.webhook_id);
      const { limit, offset, outcome } = req.query;
      const filter = { brandId: tenancy.brandId, webhookId, ...(outcome ? { status: outcome } : {}) };
      const [deliveries, total] = await Promise.all([
        listDeliveries(ctx.db, { ...filter, limit, offset }),
        countDeliveries(ctx.db, filter),
      ]);
      res.json({ deliveries: deliveries.map(presentDelivery), total, limit, offset });
    },

    async dashboardGetDelivery(req, res) {
      const tenancy = tenancyOf(req, res);
      const webhookId = await ownWebhook(ctx, tenancy, req.params.webhook_id);
      const deliveryId = req.params.delivery_id;
      const found = isUuid(deliveryId)
        ? await deliveryWithAttempts(ctx.db, { brandId: tenancy.brandId, webhookId, deliveryId })
        : null;
      if (!found) throw new ApiError("not_found", `No delivery with id ${deliveryId} for this webhook.`);
      res.json({
        delivery: presentDelivery(found.delivery),
        payload: found.payload,
        attempts: found.attempts.map((attempt) => ({
          ...deliveryAttempt(attempt),
          // The dashboard shows the answer as stored (1 KiB).
          response_body: attempt.responseBody,
          signature: signWebhookPayload(found.payload, found.secret, { timestamp: attempt.signatureT }),
        })),
      });
    },
  };
}
