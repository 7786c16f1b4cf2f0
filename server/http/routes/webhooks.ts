import { Router } from "express";
import type { EventType } from "../../domain/types.ts";
import { ApiError } from "../../errors.ts";
import type { ServiceContext } from "../../services/context.ts";
import { brandWebhooks, registerWebhook, removeWebhook } from "../../services/webhooks.ts";
import { callerOf } from "../guard.ts";
import { webhookRegistered, webhookSummary } from "../presenters.ts";

export function webhookRoutes(ctx: ServiceContext & { webhookAllowHosts: readonly string[] }): Router {
  const router = Router();
  const scopeOf = (res: Parameters<typeof callerOf>[0]) => ({ brandId: callerOf(res).brand.id, mode: callerOf(res).mode });

  router.post("/webhooks", async (req, res) => {
    const body = req.body as { url: string; events: EventType[] };
    res.status(201).json(webhookRegistered(await registerWebhook(ctx, scopeOf(res), body)));
  });

  router.get("/webhooks", async (_req, res) => {
    res.json({ webhooks: (await brandWebhooks(ctx, scopeOf(res))).map(webhookSummary) });
  });

  router.delete("/webhooks", async (req, res) => {
    const id = req.query.id;
    if (typeof id !== "string" || id === "") throw new ApiError("missing_fields", "Missing required query parameter: id.");
    await removeWebhook(ctx, scopeOf(res), id);
    res.json({ webhook_id: id, deleted: true });
  });

  return router;
}
