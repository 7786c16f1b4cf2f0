import { ApiError } from "../../domain/errors.ts";
import type { ServiceContext } from "../../services/context.ts";
import {
  assertWebhookUrl,
  brandWebhooks,
  registeredWebhook,
  registerWebhook,
  removeWebhook,
} from "../../services/webhooks.ts";
import type { OperationHandlers } from "../dispatch.ts";
import { callerOf } from "../guard.ts";
import { idempotent } from "../idempotency.ts";
import { webhookRegistered, webhookSummary } from "../presenters.ts";

export function webhookHandlers(
  ctx: ServiceContext & { webhookAllowHosts: readonly string[] },
): OperationHandlers<"createWebhook" | "listWebhooks" | "deleteWebhook"> {
  const scopeOf = (res: Parameters<typeof callerOf>[0]) => ({
    brandId: callerOf(res).brand.id,
    mode: callerOf(res).mode,
  });
  const registerIdempotently = idempotent(ctx, {
    operation: "createWebhook",
    async run(req, res, onCreated) {
      const body = req.body;
      return { status: 201, body: webhookRegistered(await registerWebhook(ctx, scopeOf(res), body, { onCreated })) };
    },
    async resume(_req, res, webhookId) {
      const webhook = await registeredWebhook(ctx, scopeOf(res), webhookId);
      if (!webhook) throw new Error(`webhook ${webhookId}, recorded with its Idempotency-Key, is missing`);
      return { status: 201, body: webhookRegistered(webhook) };
    },
  });
  return {
    async createWebhook(req, res) {
      // Every 400 of this operation is a check of the request alone, made before the key is claimed.
      assertWebhookUrl(ctx, req.body.url);
      await registerIdempotently(req, res);
    },

    async listWebhooks(_req, res) {
      res.json({ webhooks: (await brandWebhooks(ctx, scopeOf(res))).map(webhookSummary) });
    },

    async deleteWebhook(req, res) {
      const id = req.query.id;
      if (typeof id !== "string" || id === "")
        throw new ApiError("missing_fields", "Missing required query parameter: id.");
      await removeWebhook(ctx, scopeOf(res), id);
      res.json({ webhook_id: id, deleted: true });
    },
  };
}
