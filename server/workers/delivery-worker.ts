import type { ClaimLimits } from "../store/delivery-queue.ts";
import { fullOnes } from "../store/delivery-queue.ts";
import {
  type AttemptResult,
  claimDue,
  type DeliveryContext,
  fanOut,
  lookForWork,
  recordResults,
  send,
} from "../services/delivery.ts";

export interface DeliveryWorkerOptions {
  /** Attempts in flight at most (default 50). */
  concurrency?: number;
  /** Attempts in flight at most for one webhook (default 5), so hanging receivers cannot take every slot. */
  perWebhook?: number;
  /**
   * Attempts in flight at most for one brand (default a fifth of `concurrency`: 10), so one brand's
   * hanging or slow receivers hold at most its share of the slots.
   */
  perBrand?: number;
  /**
   * Attempts in flight at most beyond `concurrency` (default as many: 50, so up to 50 brands whose receivers all
   * hang still leave a place for a brand with nothing in flight), each the first
   * attempt of a brand with nothing in flight: while other brands' receivers hold every slot, a
   * brand with work due still starts. So at most `concurrency + reserve` attempts are in flight.
   */
  reserve?: number;
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
 * Claims tried again at once, in a row, after another process locked rows this one had picked
 * (SKIP LOCKED): the rows are free again as soon as that claim ends. Past this, the next tick tries.
 */
const LOST_RACE_RETRIES = 3;

/**
 * The attempts in flight: how many in all, per webhook and per brand, and the results finished and
 * not yet recorded.
 */
class Slots {
  readonly running = new Set<Promise<void>>();
  readonly byWebhook = new Map<string, number>();
  readonly byBrand = new Map<string, number>();
  /** Attempts finished and not yet recorded. */
  finished: AttemptResult[] = [];
  /** Attempts finished so far: one that finishes while a claim runs frees a place the claim may not have seen. */
  finishedCount = 0;

  count({ webhookId, brandId }: { webhookId: string; brandId: string }, change: 1 | -1): void {
    countIn(this.byWebhook, webhookId, change);
    countIn(this.byBrand, brandId, change);
  }

  /** The results to record, handed over once. */
  takeFinished(): AttemptResult[] {
    const batch = this.finished;
    this.finished = [];
    return batch;
  }
}

function countIn(counts: Map<string, number>, id: string, change: 1 | -1): void {
  const next = (counts.get(id) ?? 0) + change;
  if (next === 0) counts.delete(id);
  else counts.set(id, next);
}

/**
 * Where the worker stands: `idle` (nothing runs; the timer, a finished attempt or the end of a
 * put-off starts a cycle), `cycling` (one cycle runs; a cycle asked for meanwhile is queued and
 * runs after it), `spaced` (under API load, the next cycle waits for BUSY_SPACING_MS since the
 * last write), `stopped` (no more cycles; the attempts in flight are waited for and recorded).
 */
type WorkerState = "idle" | "cycling" | "spaced" | "stopped";

/**
 * Expands recorded events into deliveries and sends due deliveries, with up to `concurrency`
 * attempts in flight, at most `perWebhook` of them for one webhook and `perBrand` for one brand.
 * Slots are refilled as attempts finish rather than batch by batch, so a receiver that takes the
 * whole time-out to answer holds its own slots, not every delivery claimed with it, and never more
 * than its webhook's and brand's share of them. Claims deal the slots out by brand, the brand with
 * the fewest attempts in flight first, and a brand with nothing in flight gets one attempt from
 * the `reserve` when every slot is taken (store/delivery-queue.ts, `claimDueDeliveries`): one
 * brand's hanging receivers delay only that brand's deliveries (docs/architecture.md, "Fair delivery").
 *
 * The database work runs in cycles, one at a time: record the attempts finished since the last
 * cycle (one statement for all of them), then claim as many due deliveries as there are free
 * slots, plus first attempts of brands with nothing in flight from the reserve (one statement), so nothing sits
 * leased while waiting for a slot. Attempts finishing together are recorded and refilled by one
 * cycle. While claims find work, a freed slot
 * is refilled at once; otherwise, and on every tick of `intervalMs`, the cycle first takes a cheap
 * read of what is pending (`lookForWork`) and writes only when something is due or events wait to
 * be expanded. An idle worker therefore writes nothing.
 *
 * `stop()` stops claiming and waits for the attempts in flight, so each is recorded.
 */
export class DeliveryWorker {
  #state: WorkerState = "idle";
  readonly #slots = new Slots();
  /** The cycle running, if any. */
  #cycling: Promise<void> | null = null;
  /** A cycle asked for while one ran, and whether it must look for work first; null if none. */
  #queued: { looks: boolean } | null = null;
  /** The put-off cycle's timer while `spaced`, and whether that cycle looks first. */
  #putOff: { timer: NodeJS.Timeout; looks: boolean } | null = null;
  #refillQueued = false;
  /** The last claim found work, so more may be due: a freed slot is refilled without looking first. */
  #found = false;
  /** When the last write for new work (an expansion or a claim) was made. */
  #lastWorkAt = 0;
  /**
   * The pending work last seen when a claim found nothing although something was due and no other
   * process had locked what it picked: the slots and the reserve are full. No claim is tried again
   * for the same pending work until one of this worker's attempts finishes (or new events are
   * expanded), so a receiver that hangs with a backlog does not turn every tick into a write. The
   * look leaves out webhooks and brands at their cap, so another brand's delivery or retry falling
   * due behind a full brand's backlog is new pending work and is claimed at the next tick.
   */
  #blockedOn: string | null = null;
  /** Claims in a row that lost rows to another process (see LOST_RACE_RETRIES). */
  #lostRaces = 0;
  readonly #timer: NodeJS.Timeout;

  private readonly ctx: DeliveryContext;
  private readonly concurrency: number;
  private readonly perWebhook: number;
  private readonly perBrand: number;
  private readonly reserve: number;
  private readonly apiBusy: () => boolean;
  private readonly onError: (error: unknown) => void;

  constructor(
    ctx: DeliveryContext,
    {
      concurrency = 50,
      perWebhook = 5,
      perBrand = Math.max(1, Math.floor(concurrency / 5)),
      reserve = concurrency,
      intervalMs,
      apiBusy = () => false,
      onError,
    }: DeliveryWorkerOptions,
  ) {
    this.ctx = ctx;
    this.concurrency = concurrency;
    this.perWebhook = perWebhook;
    this.perBrand = perBrand;
    this.reserve = reserve;
    this.apiBusy = apiBusy;
    this.onError = onError;
    this.#timer = setInterval(() => this.#run(true), intervalMs);
    this.#run(true);
  }

  /** Where the worker stands (see WorkerState). */
  get state(): WorkerState {
    return this.#state;
  }

  async stop(): Promise<void> {
    this.#state = "stopped";
    clearInterval(this.#timer);
    if (this.#putOff) clearTimeout(this.#putOff.timer);
    await this.#cycling;
    await Promise.allSettled(this.#slots.running);
    await this.#record();
  }

  // A failure is reported, never allowed to break the bookkeeping (or stop()).
  #report = (error: unknown): void => {
    try {
      this.onError(error);
    } catch {
      // The reporter itself failed; nothing more can be done with the error.
    }
  };

  /**
   * Starts a cycle, or queues one behind the cycle running. Each call makes at most one cycle
   * (plus one after it if asked meanwhile): every call comes from the timer, the start, a
   * finished attempt, the end of a put-off or an expansion that did work, so there is no tight
   * loop, even with a failing database.
   */
  #run(looks: boolean): void {
    if (this.#state === "stopped") return;
    if (this.#state === "cycling") {
      this.#queued = { looks: looks || (this.#queued?.looks ?? false) };
      return;
    }
    this.#state = "cycling";
    this.#cycling = this.#cycle(looks)
      .catch(this.#report)
      .finally(() => {
        this.#cycling = null;
        if (this.#state === "stopped") return;
        this.#state = this.#putOff ? "spaced" : "idle";
        const queued = this.#queued;
        this.#queued = null;
        if (queued) this.#run(queued.looks);
      });
  }

  /** Attempts that finish in the same turn of the event loop are recorded and refilled together. */
  #refill(): void {
    if (this.#refillQueued) return;
    this.#refillQueued = true;
    setImmediate(() => {
      this.#refillQueued = false;
      this.#run(false);
    });
  }

  /** Under API load: the next cycle after the spacing, looking first if any call asked to. */
  #putOffFor(ms: number, looks: boolean): void {
    if (this.#putOff) {
      this.#putOff.looks ||= looks;
      return;
    }
    const putOff = {
      looks,
      timer: setTimeout(() => {
        this.#putOff = null;
        if (this.#state === "spaced") this.#state = "idle";
        this.#run(putOff.looks);
      }, ms),
    };
    this.#putOff = putOff;
  }

  // A batch that cannot be recorded is dropped, not kept: its leases run out and the attempts are
  // made again (at least once), as if this process had stopped.
  async #record(): Promise<void> {
    if (this.#slots.finished.length === 0) return;
    await recordResults(this.ctx, this.#slots.takeFinished()).catch(this.#report);
  }

  async #cycle(looks: boolean): Promise<void> {
    await this.#record();
    if (this.#state === "stopped") return;
    // With every slot taken a cycle still runs: a brand with nothing in flight may start one
    // attempt from the reserve (see claimDueDeliveries), so its events are expanded and claimed.
    const running = this.#slots.running.size;
    // The finished attempts these places account for, read with them: one that finishes later in
    // this cycle frees a place its claim did not see, so the cycle it queues must not be blocked.
    const finished = this.#slots.finishedCount;
    let free = Math.max(0, this.concurrency - running);
    let firstPlaces = Math.max(0, Math.min(this.reserve, this.concurrency + this.reserve - running - free));
    const underLoad = this.apiBusy();
    if (underLoad) {
      const wait = this.#lastWorkAt + BUSY_SPACING_MS - Date.now();
      if (wait > 0) return this.#putOffFor(wait, looks);
      free = Math.min(free, BUSY_CLAIM);
      firstPlaces = Math.min(firstPlaces, BUSY_CLAIM - free);
    }
    const limits: ClaimLimits = {
      limit: free,
      firstPlaces,
      perWebhook: this.perWebhook,
      perBrand: this.perBrand,
      inFlight: this.#slots.byWebhook,
      inFlightByBrand: this.#slots.byBrand,
    };
    if (!looks && this.#found) {
      await this.#claim(limits);
      return;
    }
    const work = await lookForWork(this.ctx, fullOnes(limits));
    const fannedOut = work.eventsToFanOut ? (await fanOut(this.ctx, underLoad ? BUSY_FAN_OUT : undefined)) > 0 : false;
    if (fannedOut) {
      this.#lastWorkAt = Date.now();
      // Expanded events may have left others waiting: look again right after this cycle.
      this.#run(true);
    }
    const due = fannedOut || (work.nextDueAt !== null && work.nextDueAt.getTime() <= this.ctx.clock().getTime());
    if (!due) {
      this.#found = false;
      return;
    }
    const seen = `${work.nextDueAt?.getTime()}/${finished}`;
    if (!fannedOut && this.#blockedOn === seen) return;
    const { claimed, lostRace } = await this.#claim(limits);
    this.#blockedOn = claimed === 0 && !lostRace ? seen : null;
  }

  /** Claims and starts the attempts; `lostRace`: another process locked some rows this claim picked. */
  async #claim(limits: ClaimLimits): Promise<{ claimed: number; lostRace: boolean }> {
    if (this.#state === "stopped") return { claimed: 0, lostRace: false };
    const slots = this.#slots;
    const { claimed, picked } = await claimDue(this.ctx, limits);
    this.#lastWorkAt = Date.now();
    this.#found = claimed.length > 0;
    const lostRace = picked > claimed.length;
    // The rows another process locked were due and picked: they (or others) are free again as soon
    // as its claim ends, so try again at once rather than wait for a tick or a finished attempt.
    this.#lostRaces = lostRace ? this.#lostRaces + 1 : 0;
    if (lostRace && this.#lostRaces <= LOST_RACE_RETRIES) this.#run(true);
    for (const delivery of claimed) {
      slots.count(delivery, 1);
      const running: Promise<void> = send(this.ctx, delivery)
        .then((result) => void slots.finished.push(result), this.#report)
        .finally(() => {
          // A freed slot (and, for a webhook at its cap, a freed place) is refilled soon.
          slots.running.delete(running);
          slots.count(delivery, -1);
          slots.finishedCount += 1;
          this.#refill();
        });
      slots.running.add(running);
    }
    return { claimed: claimed.length, lostRace };
  }
}

/** Starts a delivery worker (see DeliveryWorker); `stop()` ends it. */
export function startDeliveryWorker(ctx: DeliveryContext, options: DeliveryWorkerOptions): DeliveryWorker {
  return new DeliveryWorker(ctx, options);
}
