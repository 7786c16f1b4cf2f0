import { webhookDeliveryHeaders } from "../../sdk/webhooks.ts";
import { nextAttemptDelay } from "../domain/retry-schedule.ts";
import type { DeliveryOutcome, WebhookTransport } from "../providers/webhook-transport.ts";
import type { Database } from "../store/database.ts";
import {
  type AttemptRecord,
  type ClaimedDelivery,
  type ClaimLimits,
  claimDueDeliveries,
  type PendingWork,
  pendingWork,
  recordAttempts,
} from "../store/delivery-queue.ts";
import { fanOutEvents } from "../store/outbox.ts";
import type { Clock } from "./context.ts";
import { clockAt } from "./scope-clock.ts";

export interface DeliveryContext {
  db: Database;
  clock: Clock;
  transport: WebhookTransport;
  timeoutMs: number;
  retryScheduleMs: readonly number[];
  batchSize?: number;
  /** Told of every recorded attempt (logs and metrics: see observability/). */
  onAttempt?(report: AttemptReport): void;
}

/** One recorded attempt, as the logs and metrics see it: ids and outcome, never the URL, secret or body. */
export interface AttemptReport {
  deliveryId: string;
  webhookId: string;
  eventId: string;
  attempt: number;
  ok: boolean;
  responseStatus: number | null;
  error: string | null;
  /** When the next attempt is due; null when there is none (succeeded, or failed for good). */
  nextAttemptAt: Date | null;
}

/** A finished attempt, not yet recorded. */
export interface AttemptResult {
  record: AttemptRecord;
  report: AttemptReport;
}

/** A lease a little longer than the time-out, so an attempt in flight is never claimed twice. */
const LEASE_MARGIN_MS = 5_000;

/** Deliveries written by one expansion at most (whole events), so it stays short beside the requests. */
const FAN_OUT_DELIVERIES = 500;

/** The cheap look before any write: see `pendingWork`. */
export function lookForWork(
  ctx: DeliveryContext,
  leaveOut?: { webhooks: readonly string[]; brands: readonly string[] },
): Promise<PendingWork> {
  return pendingWork(ctx.db, leaveOut);
}

/** Expands waiting events into about `maxDeliveries` deliveries at most; the number of events expanded (0: none was waiting). */
export function fanOut(ctx: DeliveryContext, maxDeliveries = FAN_OUT_DELIVERIES): Promise<number> {
  return fanOutEvents(ctx.db, { maxEvents: maxDeliveries, maxDeliveries });
}

/**
 * Claims up to `limit` due deliveries under a lease long enough for one attempt, so no other
 * worker (in this process or another) sends them meanwhile. One statement, so no transaction
 * around it: its row locks last as long as it does.
 */
export function claimDue(
  ctx: DeliveryContext,
  limits: ClaimLimits,
): Promise<{ claimed: ClaimedDelivery[]; picked: number }> {
  const now = ctx.clock();
  return claimDueDeliveries(ctx.db, now, new Date(now.getTime() + ctx.timeoutMs + LEASE_MARGIN_MS), limits);
}

/** Records finished attempts in one statement, then tells `onAttempt` of each. */
export async function recordResults(ctx: DeliveryContext, results: readonly AttemptResult[]): Promise<void> {
  if (results.length === 0) return;
  await recordAttempts(
    ctx.db,
    results.map((result) => result.record),
  );
  for (const { report } of results) ctx.onAttempt?.(report);
}

/**
 * One pass that waits for every attempt it starts: what tests use to deliver step by step. The
 * running server uses the delivery worker (workers/delivery-worker.ts), which never waits for a
 * batch, so one slow receiver does not hold up the others.
 */
export async function deliverDue(ctx: DeliveryContext): Promise<number> {
  while ((await fanOut(ctx)) > 0);
  const { claimed } = await claimDue(ctx, { limit: ctx.batchSize ?? 20 });
  await recordResults(ctx, await Promise.all(claimed.map((delivery) => send(ctx, delivery))));
  return claimed.length;
}

/**
 * When a finished attempt is dated, on the clock of its scope: when it finished. The signature's
 * `t` is the real time all the same (receivers check its age).
 *
 * A test-mode attempt is dated on its brand's test clock. One made more than a lease after it fell
 * due on that clock was overtaken by an advance of the clock (POST /test-clock/advance): it is
 * dated at its due time plus how long it took, as if made then, and the retry scheduled from it
 * falls due at once when the advance went past it too. So after an advance the attempts a
 * receiver would have had over the advanced time are made one after another, in schedule order,
 * each dated when the schedule had it.
 */
export function attemptTime(
  delivery: Pick<ClaimedDelivery, "mode" | "dueAt" | "clockOffsetSeconds">,
  finishedAt: Date,
  durationMs: number,
  leaseMs: number,
): Date {
  if (delivery.mode !== "test") return finishedAt;
  const onClock = clockAt(finishedAt, delivery.clockOffsetSeconds);
  const asScheduled = delivery.dueAt.getTime() + durationMs;
  return onClock.getTime() - asScheduled > leaseMs ? new Date(asScheduled) : onClock;
}

/** Sends one delivery and works out what to record (retry, success, failure); writes nothing. */
export async function send(ctx: DeliveryContext, delivery: ClaimedDelivery): Promise<AttemptResult> {
  const number = delivery.attempt + 1;
  const at = ctx.clock();
  const t = Math.floor(at.getTime() / 1000);
  const sentAt = performance.now();
  const outcome: DeliveryOutcome = delivery.webhookDeleted
    ? { ok: false, status: null, error: "webhook was deleted; not sent", permanent: true }
    : await ctx.transport.send({
        url: delivery.url,
        body: delivery.payload,
        // Signed by the SDK's code, which `live-stream-hosting listen` signs with too.
        headers: webhookDeliveryHeaders(delivery.payload, delivery.secret, t),
      });
  const durationMs = Math.round(performance.now() - sentAt);
  const delay = outcome.ok || outcome.permanent ? null : nextAttemptDelay(number, ctx.retryScheduleMs);
  const finishedAt = attemptTime(delivery, ctx.clock(), durationMs, ctx.timeoutMs + LEASE_MARGIN_MS);
  const error = outcome.ok ? null : outcome.error;
  const nextAttemptAt = delay === null ? null : new Date(finishedAt.getTime() + delay);
  return {
    record: {
      deliveryId: delivery.id,
      series: delivery.series,
      attempt: number,
      at: finishedAt,
      signatureT: t,
      responseStatus: outcome.status,
      responseBody: outcome.body ?? null,
      error,
      durationMs,
      status: outcome.ok ? "succeeded" : delay === null ? "failed" : "pending",
      nextAttemptAt,
    },
    report: {
      deliveryId: delivery.id,
      webhookId: delivery.webhookId,
      eventId: delivery.eventId,
      attempt: number,
      ok: outcome.ok,
      responseStatus: outcome.status,
      error,
      nextAttemptAt,
    },
  };
}
