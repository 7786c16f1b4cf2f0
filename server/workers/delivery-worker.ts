import { attempt, claimDue, type DeliveryContext } from "../services/delivery.ts";

export interface DeliveryWorkerOptions {
  /** Attempts in flight at most (default 20). */
  concurrency?: number;
  /** How often due deliveries are looked for when no attempt has just finished. */
  intervalMs: number;
  onError(error: unknown): void;
}

/**
 * Sends due webhook deliveries with up to `concurrency` attempts in flight. Slots are refilled as
 * attempts finish rather than batch by batch, so a receiver that takes the whole time-out to
 * answer holds one slot, not every delivery claimed with it. Each claim takes only as many
 * deliveries as there are free slots, so nothing sits leased while waiting for a slot.
 *
 * `stop()` stops claiming and waits for the attempts in flight, so each is recorded.
 */
export function startDeliveryWorker(ctx: DeliveryContext, { concurrency = 20, intervalMs, onError }: DeliveryWorkerOptions): { stop(): Promise<void> } {
  const inFlight = new Set<Promise<void>>();
  let claiming: Promise<void> | null = null;
  let stopped = false;
  // The last claim filled every free slot, so more deliveries may be due right now.
  let backlog = false;

  // A failure is reported, never allowed to break the bookkeeping below (or stop()).
  const report = (error: unknown): void => {
    try {
      onError(error);
    } catch {
      // The reporter itself failed; nothing more can be done with the error.
    }
  };

  const fill = (): void => {
    if (stopped || claiming) return;
    const free = concurrency - inFlight.size;
    if (free <= 0) return;
    claiming = claimDue(ctx, free)
      .then(
        (claimed) => {
          backlog = claimed.length === free;
          for (const delivery of claimed) {
            const running: Promise<void> = attempt(ctx, delivery)
              .catch(report)
              .finally(() => {
                inFlight.delete(running);
                if (backlog) fill();
              });
            inFlight.add(running);
          }
        },
        (error) => {
          // No refill on finish until a claim succeeds again: a failing database is retried on
          // the timer, not in a tight loop.
          backlog = false;
          report(error);
        },
      )
      .finally(() => {
        claiming = null;
        // Attempts that finished while this claim ran found it busy; their slots are refilled now.
        if (backlog) fill();
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
