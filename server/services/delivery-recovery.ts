/**
 * The partner's recovery of webhook deliveries (public API): one delivery with every attempt, one
 * sent again now (retry), every failed one of a webhook since a time (recover). A delivery sent
 * again starts a new series of attempts, the retry schedule anew (store/deliveries.ts).
 */
import { randomUUID } from "node:crypto";
import { ApiError } from "../domain/errors.ts";
import { isUuid } from "../domain/ids.ts";
import type { StreamScope } from "../domain/types.ts";
import {
  countSentAgain,
  type DeliveryWithTarget,
  deliveryWithAttempts,
  listDeliveries,
  recoverFailedDeliveries,
  findDelivery,
  hasFailedDeliveries,
  sendDeliveryAgain,
} from "../store/deliveries.ts";
import type { OnCreated, ServiceContext } from "./context.ts";
import { scopeClock } from "./scope-clock.ts";
import { brandWebhooks } from "./webhooks.ts";

/** How far back `recover` looks, and how many deliveries one call queues at most (the contract's). */
export const RECOVER_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;
export const RECOVER_BATCH = 10_000;

const noDelivery = (id: string) => new ApiError("not_found", `No delivery with id ${id}.`);

/** One delivery of the brand in the mode, with its attempts and the body sent. */
export async function deliveryDetail(ctx: ServiceContext, scope: StreamScope, deliveryId: string) {
  const found = isUuid(deliveryId)
    ? await deliveryWithAttempts(ctx.db, { brandId: scope.brandId, mode: scope.mode, deliveryId })
    : null;
  if (!found) throw noDelivery(deliveryId);
  return found;
}

/**
 * Sends the delivery again now, whatever its status: a new series, the first attempt due at once.
 * A delivery the worker has not written yet (its event not yet expanded) is already due: it is
 * answered as it is. `onCreated` records the delivery for an Idempotency-Key, in the transaction.
 */
export async function resendDelivery(
  ctx: ServiceContext,
  scope: StreamScope,
  deliveryId: string,
  requestedBy: string,
  { onCreated }: { onCreated?: OnCreated } = {},
): Promise<DeliveryWithTarget> {
  if (!isUuid(deliveryId)) throw noDelivery(deliveryId);
  return ctx.db.transaction(async (tx) => {
    const sent = await sendDeliveryAgain(
      tx,
      { deliveryId, brandId: scope.brandId, mode: scope.mode },
      { trigger: "retry", requestedBy, requestId: randomUUID() },
      ctx.clock(),
    );
    const [delivery] = await listDeliveries(tx, { brandId: scope.brandId, mode: scope.mode, deliveryId, limit: 1 });
    if (!delivery) throw noDelivery(deliveryId);
    // Not sent again: a delivery still to be written (due already), unless its webhook was deleted.
    if (!sent && (delivery.status !== "pending" || (await findDelivery(tx, deliveryId))?.webhookDeleted !== false))
      throw new ApiError(
        "not_found",
        `The webhook ${delivery.webhookId} of delivery ${deliveryId} was deleted; there is nothing to send to.`,
      );
    await onCreated?.(tx, deliveryId);
    return delivery;
  });
}

/** The delivery as it is now (an Idempotency-Key's retry whose answer was never stored). */
export async function deliveryNow(
  ctx: ServiceContext,
  scope: StreamScope,
  deliveryId: string,
): Promise<DeliveryWithTarget> {
  const [delivery] = await listDeliveries(ctx.db, { ...scope, deliveryId, limit: 1 });
  if (!delivery) throw noDelivery(deliveryId);
  return delivery;
}

/**
 * When `since` may be: at most RECOVER_WINDOW_MS back from the real time `now`, and not after
 * `scopeNow`, the scope's clock (a test-mode brand's test clock, ahead of the real time), on which
 * the deliveries' times are: a time taken from either clock is accepted.
 */
function checkSince(since: Date, now: Date, scopeNow: Date): void {
  // A time the contract's date-time admits that JavaScript cannot hold (a leap second, `…T23:59:60Z`).
  if (Number.isNaN(since.getTime()))
    throw new ApiError("invalid_fields", "Invalid field since: not a time this server can use.");
  const earliest = new Date(now.getTime() - RECOVER_WINDOW_MS);
  if (since < earliest)
    throw new ApiError(
      "invalid_fields",
      `Invalid field since: at most 7 days back (${earliest.toISOString()} or later).`,
    );
  if (since > scopeNow) throw new ApiError("invalid_fields", "Invalid field since: it is in the future.");
}

/**
 * Sends every failed delivery of the webhook created since `since` again (at most RECOVER_BATCH,
 * oldest first). The call's id marks the deliveries it queued; `onCreated` records it for an
 * Idempotency-Key, so a replay whose answer was lost counts them (recoveredBy).
 */
export async function recoverDeliveries(
  ctx: ServiceContext,
  scope: StreamScope,
  input: { webhookId: string; since: Date },
  requestedBy: string,
  { onCreated }: { onCreated?: OnCreated } = {},
): Promise<{ queued: number; hasMore: boolean }> {
  const now = ctx.clock();
  checkSince(input.since, now, await scopeClock(ctx, ctx.db, scope));
  const webhook = (await brandWebhooks(ctx, scope)).find((one) => one.id === input.webhookId);
  if (!webhook) throw new ApiError("not_found", `No webhook with id ${input.webhookId}.`);
  const requestId = randomUUID();
  return ctx.db.transaction(async (tx) => {
    const outcome = await recoverFailedDeliveries(
      tx,
      { ...scope, webhookId: webhook.id, since: input.since, limit: RECOVER_BATCH },
      { trigger: "recover", requestedBy, requestId },
      now,
    );
    await onCreated?.(tx, requestId);
    return outcome;
  });
}

/** What a recover call queued, counted from the deliveries it marked (an Idempotency-Key's resume). */
export async function recoveredBy(
  ctx: ServiceContext,
  requestId: string,
  input: { webhookId: string; since: Date },
): Promise<{ queued: number; hasMore: boolean }> {
  const [queued, hasMore] = await Promise.all([
    countSentAgain(ctx.db, requestId),
    hasFailedDeliveries(ctx.db, input.webhookId, input.since),
  ]);
  return { queued, hasMore };
}
