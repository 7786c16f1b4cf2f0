import { randomUUID } from "node:crypto";
import { isUuid } from "../domain/ids.ts";
import { generateWebhookSecret } from "../domain/webhook-secret.ts";
import { webhookUrlProblem } from "../domain/webhook-url.ts";
import type { EventType, StreamScope, Webhook } from "../domain/types.ts";
import { ApiError } from "../domain/errors.ts";
import { webhooksPerBrand } from "../../generated/limits.ts";
import { lockBrand } from "../store/brand-lock.ts";
import { countWebhooks, deleteWebhook, findWebhook, insertWebhook, listWebhooks } from "../store/webhooks.ts";
import type { OnCreated, ServiceContext } from "./context.ts";

type WebhookContext = ServiceContext & { webhookAllowHosts: readonly string[] };

/**
 * The URL rule of POST /webhooks: refused (400 invalid_url) unless HTTPS on a public host (or a host the
 * operator allowed). It needs no state, so it is checked with the request's validation, before
 * the Idempotency-Key.
 */
export function assertWebhookUrl(ctx: WebhookContext, url: string): void {
  const problem = webhookUrlProblem(url, ctx.webhookAllowHosts);
  if (problem) throw new ApiError("invalid_url", problem);
}

/**
 * POST /webhooks. `onCreated` runs in the transaction that stores the webhook. A brand has at most
 * `webhooksPerBrand` webhooks in a mode (the contract's WebhookList maxItems): counted under the
 * brand lock, so registrations racing on several processes cannot pass it together.
 */
export async function registerWebhook(
  ctx: WebhookContext,
  scope: StreamScope,
  input: { url: string; events: EventType[] },
  { onCreated }: { onCreated?: OnCreated } = {},
): Promise<Webhook> {
  assertWebhookUrl(ctx, input.url);
  const webhook: Webhook = {
    id: randomUUID(),
    ...scope,
    url: input.url,
    events: [...new Set(input.events)],
    secret: generateWebhookSecret(),
    createdAt: ctx.clock(),
  };
  await ctx.db.transaction(async (tx) => {
    await lockBrand(tx, scope.brandId);
    if ((await countWebhooks(tx, scope)) >= webhooksPerBrand)
      throw new ApiError(
        "webhook_limit",
        `This brand already has ${webhooksPerBrand} webhooks in ${scope.mode} mode, the most it may have; delete one before registering another.`,
      );
    await insertWebhook(tx, webhook);
    await onCreated?.(tx, webhook.id);
  });
  return webhook;
}

/** The brand's webhook `id` of this mode, deleted or not (what an earlier registration created). */
export function registeredWebhook(ctx: ServiceContext, scope: StreamScope, id: string): Promise<Webhook | null> {
  return findWebhook(ctx.db, scope, id);
}

/**
 * The brand's webhooks of the mode, the oldest `webhooksPerBrand` (the list's maxItems): a brand
 * that registered more before the cap existed sees its oldest ones, as members are listed.
 */
export function brandWebhooks(ctx: ServiceContext, scope: StreamScope): Promise<Webhook[]> {
  return listWebhooks(ctx.db, scope, webhooksPerBrand);
}

/**
 * Idempotent: an unknown id, or another brand's, answers the same as a deleted one. True when
 * this call deleted it; `onRemoved` then runs in the transaction that deletes it.
 */
export async function removeWebhook(
  ctx: ServiceContext,
  scope: StreamScope,
  id: string,
  { onRemoved }: { onRemoved?: OnCreated } = {},
): Promise<boolean> {
  if (!isUuid(id)) return false;
  return ctx.db.transaction(async (tx) => {
    const removed = await deleteWebhook(tx, scope, id, ctx.clock());
    if (removed) await onRemoved?.(tx, id);
    return removed;
  });
}
