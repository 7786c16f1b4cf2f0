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
import { tenancyOf } from "../tenancy.ts";
import { idempotent } from "../idempotency.ts";
import { webhookRegistered, webhookSummary } from "../response-bodies.ts";

export function webhookHandlers(
  ctx: ServiceContext & { webhookAllowHosts: readonly string[] },
): OperationHandlers<"createWebhook" | "listWebhooks" | "deleteWebhook"> {
  const registerIdempotently = idempotent(ctx, {
    operation: "createWebhook",
    async run(req, res, onCreated) {
      const body = req.body;
      return {
        status: 201,
        body: webhookRegistered(await registerWebhook(ctx, tenancyOf(req, res), body, { onCreated })),
      };
    },
    async resume(req, res, webhookId) {
      const webhook = await registeredWebhook(ctx, tenancyOf(req, res), webhookId);
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

    async listWebhooks(req, res) {
      res.json({ webhooks: (await brandWebhooks(ctx, tenancyOf(req, res))).map(webhookSummary) });
    },

    async deleteWebhook(req, res) {
      const id = req.query.id;
      if (typeof id !== "string" || id === "")
        throw new ApiError("missing_fields", "Missing required query parameter: id.");
      await removeWebhook(ctx, tenancyOf(req, res), id);
      res.json({ webhook_id: id, deleted: true });
    },
  };
}
