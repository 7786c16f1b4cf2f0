import type { EventType } from "../../domain/types.ts";
import { ApiError } from "../../errors.ts";
import type { ServiceContext } from "../../services/context.ts";
import { brandWebhooks, registerWebhook, removeWebhook } from "../../services/webhooks.ts";
import type { OperationHandlers } from "../dispatch.ts";
import { callerOf } from "../guard.ts";
import { webhookRegistered, webhookSummary } from "../presenters.ts";

export function webhookHandlers(ctx: ServiceContext & { webhookAllowHosts: readonly string[] }): OperationHandlers<"createWebhook" | "listWebhooks" | "deleteWebhook"> {
  const scopeOf = (res: Parameters<typeof callerOf>[0]) => ({ brandId: callerOf(res).brand.id, mode: callerOf(res).mode });
  return {
    async createWebhook(req, res) {
      const body = req.body as { url: string; events: EventType[] };
      res.status(201).json(webhookRegistered(await registerWebhook(ctx, scopeOf(res), body)));
    },

    async listWebhooks(_req, res) {
      res.json({ webhooks: (await brandWebhooks(ctx, scopeOf(res))).map(webhookSummary) });
    },

    async deleteWebhook(req, res) {
      const id = req.query.id;
      if (typeof id !== "string" || id === "") throw new ApiError("missing_fields", "Missing required query parameter: id.");
      await removeWebhook(ctx, scopeOf(res), id);
      res.json({ webhook_id: id, deleted: true });
    },
  };
}
