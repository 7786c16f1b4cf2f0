import { type AttemptResult, claimDue, type DeliveryContext, fanOut, lookForWork, recordResults, send } from "../services/delivery.ts";

export interface DeliveryWorkerOptions {
  /** Attempts in flight at most (default 50). */
  concurrency?: number;
  /** Attempts in flight at most for one webhook (default 5), so hanging receivers cannot take every slot. */
  perWebhook?: number;
  /** How often the worker looks for work when no attempt has just finished. */
  intervalMs: number;
  /**
   * Whether API requests are being answered right now. While they are, deliveries take a bounded
   * share of the process and its database: at most `BUSY_CLAIM` claimed every `BUSY_SPACING_MS`.
   */
  apiBusy?(): boolean;
  onError(error: unknown): void;
}

/**
 * Under API load, a claim at most this often, of at most this many deliveries (so at most 200 a
 * second): the requests that record events come first, and the deliveries still go out. A
 * backlog built meanwhile drains at full speed once the load drops.
 */
const BUSY_SPACING_MS = 50;
const BUSY_CLAIM = 10;
/** Under API load, deliveries written by one expansion at most (whole events): a short statement. */
const BUSY_FAN_OUT = 100;

/**
 * Expands recorded events into deliveries and sends due deliveries, with up to `concurrency`
 * attempts in flight, at most `perWebhook` of them for one webhook. Slots are refilled as attempts
 * finish rather than batch by batch, so a receiver that takes the whole time-out to answer holds
 * its own slots, not every delivery claimed with it, and never more than `perWebhook` of them.
 *
 * The database work runs in cycles, one at a time: record the attempts finished since the last
 * cycle (one statement for all of them), then, if slots are free, claim as many due deliveries as
 * there are free slots (one statement), so nothing sits leased while waiting for a slot. Attempts
 * finishing together are recorded and refilled by one cycle. While claims find work, a freed slot
 * is refilled at once; otherwise, and on every tick of `intervalMs`, the cycle first takes a cheap
 * read of what is pending (see `pendingWork`: served from the embedded database's read cache when
 * nothing was written) and writes only when something is due or events wait to be expanded. An
 * idle worker therefore writes nothing.
 *
 * `stop()` stops claiming and waits for the attempts in flight, so each is recorded.
 */
export function startDeliveryWorker(ctx: DeliveryContext, { concurrency = 50, perWebhook = 5, intervalMs, apiBusy = () => false, onError }: DeliveryWorkerOptions): { stop(): Promise<void> } {
  const inFlight = new Set<Promise<void>>();
  const inFlightByWebhook = new Map<string, number>();
  const count = (webhookId: string, change: 1 | -1) => {
    const next = (inFlightByWebhook.get(webhookId) ?? 0) + change;
    if (next === 0) inFlightByWebhook.delete(webhookId);
    else inFlightByWebhook.set(webhookId, next);
  };
  /** Attempts finished and not yet recorded. */
  let finished: AttemptResult[] = [];
  let stopped = false;
  let cycling: Promise<void> | null = null;
  // A cycle was asked for while one ran (and whether it must look first), so one runs after it.
  let again = false;
  let againLooks = false;
  let refillQueued = false;
  // The last claim found work, so more may be due: a freed slot is refilled without looking first.
  let found = false;
  // When the last write for new work (an expansion or a claim) was made, and the cycle put off to
  // keep the spacing under API load.
  let lastWorkAt = 0;
  let putOff: NodeJS.Timeout | null = null;
  let putOffLooks = false;
  // The pending work last seen when a claim found nothing although something was due: every due
  // delivery belongs to a webhook at its cap here. No claim is tried again for the same pending
  // work until one of this worker's attempts finishes, so a receiver that hangs with a backlog
  // does not turn every tick into a write. (Another webhook's retry falling due behind that
  // backlog waits at most until one of those attempts ends: the time-out.)
  let blockedOn: string | null = null;
  /** Attempts finished so far: one that finishes while a claim runs frees a place the claim may not have seen. */
  let finishedCount = 0;

  // A failure is reported, never allowed to break the bookkeeping below (or stop()).
  const report = (error: unknown): void => {
    try {
      onError(error);
    } catch {
      // The reporter itself failed; nothing more can be done with the error.
    }
  };

  // A batch that cannot be recorded is dropped, not kept: its leases run out and the attempts are
  // made again (at least once), as if this process had stopped.
  const record = async (): Promise<void> => {
    if (finished.length === 0) return;
    const batch = finished;
    finished = [];
    await recordResults(ctx, batch).catch(report);
  };

  const cycle = async (looks: boolean): Promise<void> => {
    await record();
    if (stopped) return;
    let free = concurrency - inFlight.size;
    if (free <= 0) return;
    const underLoad = apiBusy();
    if (underLoad) {
      const wait = lastWorkAt + BUSY_SPACING_MS - Date.now();
      if (wait > 0) return putOffFor(wait, looks);
      free = Math.min(free, BUSY_CLAIM);
    }
    if (looks || !found) {
      const work = await lookForWork(ctx);
      const fannedOut = work.eventsToFanOut ? (await fanOut(ctx, underLoad ? BUSY_FAN_OUT : undefined)) > 0 : false;
      if (fannedOut) {
        lastWorkAt = Date.now();
        // Expanded events may have left others waiting: look again right after this cycle.
        run(true);
      }
      const due = fannedOut || (work.nextDueAt !== null && work.nextDueAt.getTime() <= ctx.clock().getTime());
      if (!due) {
        found = false;
        return;
      }
      const seen = `${work.nextDueAt?.getTime()}/${finishedCount}`;
      if (!fannedOut && blockedOn === seen) return;
      if (stopped) return;
      const claimed = await claim(free);
      blockedOn = claimed === 0 ? seen : null;
      return;
    }
    if (stopped) return;
    await claim(free);
  };

  function putOffFor(ms: number, looks: boolean): void {
    putOffLooks ||= looks;
    putOff ??= setTimeout(() => {
      putOff = null;
      const next = putOffLooks;
      putOffLooks = false;
      run(next);
    }, ms);
  }

  const claim = async (free: number): Promise<number> => {
    const claimed = await claimDue(ctx, { limit: free, perWebhook, inFlight: inFlightByWebhook });
    lastWorkAt = Date.now();
    found = claimed.length > 0;
    for (const delivery of claimed) {
      count(delivery.webhookId, 1);
      const running: Promise<void> = send(ctx, delivery)
        .then((result) => void finished.push(result), report)
        .finally(() => {
          // A freed slot (and, for a webhook at its cap, a freed place) is refilled soon.
          inFlight.delete(running);
          count(delivery.webhookId, -1);
          finishedCount += 1;
          refill();
        });
      inFlight.add(running);
    }
    return claimed.length;
  };

  // Each call makes at most one cycle (plus one after it if asked meanwhile): every call comes
  // from the timer, the start, a finished attempt or an expansion that did work, so there is no
  // tight loop, even with a failing database.
  function run(looks: boolean): void {
    if (stopped) return;
    if (cycling) {
      again = true;
      againLooks ||= looks;
      return;
    }
    cycling = cycle(looks)
      .catch(report)
      .finally(() => {
        cycling = null;
        if (again) {
          const next = againLooks;
          again = againLooks = false;
          run(next);
        }
      });
  }

  // Attempts that finish in the same turn of the event loop are recorded and refilled together.
  function refill(): void {
    if (refillQueued) return;
    refillQueued = true;
    setImmediate(() => {
      refillQueued = false;
      run(false);
    });
  }

  const timer = setInterval(() => run(true), intervalMs);
  run(true);

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      if (putOff) clearTimeout(putOff);
      await cycling;
      await Promise.allSettled(inFlight);
      await record();
    },
  };
}
