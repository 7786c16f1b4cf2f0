import { attempt, claimDue, type DeliveryContext } from "../services/delivery.ts";

export interface DeliveryWorkerOptions {
  /** Attempts in flight at most (default 20). */
  concurrency?: number;
  /** Attempts in flight at most for one webhook (default 5), so hanging receivers cannot take every slot. */
  perWebhook?: number;
  /** How often due deliveries are looked for when no attempt has just finished. */
  intervalMs: number;
  onError(error: unknown): void;
}

/**
 * Sends due webhook deliveries with up to `concurrency` attempts in flight, at most `perWebhook`
 * of them for one webhook. Slots are refilled as attempts finish rather than batch by batch, so a
 * receiver that takes the whole time-out to answer holds its own slots, not every delivery claimed
 * with it, and never more than `perWebhook` of them. Each claim takes only as many deliveries as
 * there are free slots, so nothing sits leased while waiting for a slot.
 *
 * `stop()` stops claiming and waits for the attempts in flight, so each is recorded.
 */
export function startDeliveryWorker(ctx: DeliveryContext, { concurrency = 20, perWebhook = 5, intervalMs, onError }: DeliveryWorkerOptions): { stop(): Promise<void> } {
  const inFlight = new Set<Promise<void>>();
  const inFlightByWebhook = new Map<string, number>();
  const count = (webhookId: string, change: 1 | -1) => {
    const next = (inFlightByWebhook.get(webhookId) ?? 0) + change;
    if (next === 0) inFlightByWebhook.delete(webhookId);
    else inFlightByWebhook.set(webhookId, next);
  };
  let claiming: Promise<void> | null = null;
  let stopped = false;
  // fill() was called while a claim ran (an attempt finished, or the timer), so it runs again after.
  let missedFill = false;

  // A failure is reported, never allowed to break the bookkeeping below (or stop()).
  const report = (error: unknown): void => {
    try {
      onError(error);
    } catch {
      // The reporter itself failed; nothing more can be done with the error.
    }
  };

  // Every call to fill() comes from the timer, the start, or a finished attempt, and makes at most
  // one claim (plus one after it if it was missed): so no tight loop, even with a failing database.
  const fill = (): void => {
    if (stopped) return;
    if (claiming) {
      missedFill = true;
      return;
    }
    const free = concurrency - inFlight.size;
    if (free <= 0) return;
    claiming = claimDue(ctx, { limit: free, perWebhook, inFlight: inFlightByWebhook })
      .then(
        (claimed) => {
          for (const delivery of claimed) {
            count(delivery.webhookId, 1);
            const running: Promise<void> = attempt(ctx, delivery)
              .catch(report)
              .finally(() => {
                // A freed slot (and, for a webhook at its cap, a freed place) is refilled at once.
                inFlight.delete(running);
                count(delivery.webhookId, -1);
                fill();
              });
            inFlight.add(running);
          }
        },
        report,
      )
      .finally(() => {
        claiming = null;
        if (missedFill) {
          missedFill = false;
          fill();
        }
      });
  };

  const timer = setInterval(fill, intervalMs);
  fill();

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await claiming;
      await Promise.allSettled(inFlight);
    },
  };
}
