/**
 * The partner's webhook deliveries (public API, scope webhooks:write, the key's mode): the list,
 * one with every attempt, a retry of one and the recovery of a webhook's failed ones.
 */
import type { Request, Response } from "express";
import { keyHint } from "../../domain/keys.ts";
import type { ServiceContext } from "../../services/context.ts";
import { wellFormedBearerKey } from "../../services/auth.ts";
import {
  deliveryDetail,
  deliveryNow,
  recoverDeliveries,
  recoveredBy,
  resendDelivery,
} from "../../services/delivery-recovery.ts";
import { countDeliveries, listDeliveries } from "../../store/deliveries.ts";
import type { OperationHandlers } from "../dispatch.ts";
import { callerOf } from "../guard.ts";
import { tenancyOf } from "../tenancy.ts";
import { idempotent } from "../idempotency.ts";
import { deliveryDetail as presentDetail, partnerDelivery } from "../response-bodies.ts";

export function deliveryHandlers(
  ctx: ServiceContext,
): OperationHandlers<
  "listWebhookDeliveries" | "getWebhookDelivery" | "retryWebhookDelivery" | "recoverWebhookDeliveries"
> {
  /** Who asked, as attempts name it: the API key as listed (`svc_test_…abcd`). */
  const requesterOf = (req: Request, res: Response) =>
    keyHint(callerOf(res).mode, wellFormedBearerKey(req.get("authorization"))?.slice(-4) ?? null) ?? "an API key";

  const retryIdempotently = idempotent(ctx, {
    operation: "retryWebhookDelivery",
    requestOf: (req) => ({ delivery_id: req.params.delivery_id }),
    async run(req, res, onCreated) {
      const delivery = await resendDelivery(ctx, tenancyOf(req, res), req.params.delivery_id, requesterOf(req, res), {
        ...(onCreated ? { onCreated } : {}),
      });
      return { status: 202, body: partnerDelivery(delivery) };
    },
    async resume(req, res, deliveryId) {
      return { status: 202, body: partnerDelivery(await deliveryNow(ctx, tenancyOf(req, res), deliveryId)) };
    },
  });

  const recoverIdempotently = idempotent(ctx, {
    operation: "recoverWebhookDeliveries",
    async run(req, res, onCreated) {
      const outcome = await recoverDeliveries(
        ctx,
        tenancyOf(req, res),
        { webhookId: req.body.webhook_id, since: new Date(req.body.since) },
        requesterOf(req, res),
        { ...(onCreated ? { onCreated } : {}) },
      );
      return { status: 202, body: { queued: outcome.queued, has_more: outcome.hasMore } };
    },
    async resume(req, _res, requestId) {
      const outcome = await recoveredBy(ctx, requestId, {
        webhookId: req.body.webhook_id,
        since: new Date(req.body.since),
      });
      return { status: 202, body: { queued: outcome.queued, has_more: outcome.hasMore } };
    },
  });

  return {
    async listWebhookDeliveries(req, res) {
      // Clamped (http/operation-rules.ts, clampPaging) and validated against the contract before this
      // runs; `limit` and `offset` given the contract's defaults.
      const { stream_id: streamId, webhook_id: webhookId, status, limit, offset } = req.query;
      const filter = {
        ...tenancyOf(req, res),
        ...(streamId ? { streamId } : {}),
        ...(webhookId ? { webhookId } : {}),
        ...(status ? { status } : {}),
      };
      const [deliveries, total] = await Promise.all([
        listDeliveries(ctx.db, { ...filter, limit, offset }),
        countDeliveries(ctx.db, filter),
      ]);
      res.json({ deliveries: deliveries.map(partnerDelivery), total, limit, offset });
    },

    async getWebhookDelivery(req, res) {
      res.json(presentDetail(await deliveryDetail(ctx, tenancyOf(req, res), req.params.delivery_id)));
    },

    retryWebhookDelivery: retryIdempotently,
    recoverWebhookDeliveries: recoverIdempotently,
  };
}
