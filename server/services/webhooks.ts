import { randomUUID } from "node:crypto";
import { isUuid } from "../domain/ids.ts";
import { generateWebhookSecret } from "../domain/webhook-secret.ts";
import { webhookUrlProblem } from "../domain/webhook-url.ts";
import type { EventType } from "../domain/types.ts";
import { ApiError } from "../errors.ts";
import type { StreamScope } from "../store/streams.ts";
import { deleteWebhook, insertWebhook, listWebhooks, type Webhook } from "../store/webhooks.ts";
import type { ServiceContext } from "./context.ts";

export async function registerWebhook(
  ctx: ServiceContext & { webhookAllowHosts: readonly string[] },
  scope: StreamScope,
  input: { url: string; events: EventType[] },
): Promise<Webhook> {
  const problem = webhookUrlProblem(input.url, ctx.webhookAllowHosts);
  if (problem) throw new ApiError("invalid_url", problem);
  const webhook: Webhook = {
    id: randomUUID(),
    ...scope,
    url: input.url,
    events: [...new Set(input.events)],
    secret: generateWebhookSecret(),
    createdAt: ctx.clock(),
  };
  await ctx.db.transaction((tx) => insertWebhook(tx, webhook));
  return webhook;
}

export function brandWebhooks(ctx: ServiceContext, scope: StreamScope): Promise<Webhook[]> {
  return listWebhooks(ctx.db, scope);
}

/** Idempotent: an unknown id, or another brand's, answers the same as a deleted one. */
export async function removeWebhook(ctx: ServiceContext, scope: StreamScope, id: string): Promise<void> {
  if (isUuid(id)) await ctx.db.transaction((tx) => deleteWebhook(tx, scope, id, ctx.clock()));
}
