import type { EventType, Mode } from "../domain/types.ts";
import { eventsAfter, eventTime, type FedEvent } from "../store/event-feed.ts";
import type { ServiceContext } from "./context.ts";
import { scopeClock } from "./scope-clock.ts";

/**
 * How far back each read of the feed looks before the newest event it has sent. Events are
 * stamped when their transaction starts and seen when it commits, by several processes with
 * their own clocks: an event may become visible after a newer one was sent. Looking back this far
 * (and skipping the ids already sent) is what keeps such an event from being lost.
 */
export const LATE_EVENT_WINDOW_MS = 30_000;

/**
 * A new feed starts this long before the connection: an event stamped by another process whose
 * clock is a little behind, or in the same millisecond, is not missed.
 */
export const START_MARGIN_MS = 1_000;

/** Events read at most per read of the feed. */
export const FEED_BATCH = 100;

/** Where a feed starts: after the connection was made, or after an event the client names. */
export type FeedStart = { kind: "now" } | { kind: "after"; eventId: string };

/**
 * A brand's events of one mode, read from the database in time order, each once: what
 * `GET /webhooks/listen` sends. The events table is the only source, so any process serves any
 * brand and a client that resumes on another process misses nothing. Memory: the ids sent within
 * the late-event window.
 */
export class EventFeed {
  /** Ids already sent, with their times (ms), within LATE_EVENT_WINDOW_MS of the newest. */
  private readonly sent = new Map<string, number>();
  private newest: number;
  private readonly ctx: Pick<ServiceContext, "db">;
  private readonly scope: { brandId: string; mode: Mode; types: readonly EventType[] };
  /** Nothing at or before this time (ms) is sent. */
  private readonly floor: number;

  private constructor(
    ctx: Pick<ServiceContext, "db">,
    scope: { brandId: string; mode: Mode; types: readonly EventType[] },
    floor: number,
    newest: number,
  ) {
    this.ctx = ctx;
    this.scope = scope;
    this.floor = floor;
    this.newest = newest;
  }

  /**
   * A feed from `start`; null when `start` names an event the brand does not have in this mode.
   * Resuming after an event repeats the window before it: the client skips what it already has.
   */
  static async open(
    ctx: Pick<ServiceContext, "db" | "clock">,
    scope: { brandId: string; mode: Mode; types: readonly EventType[] },
    start: FeedStart,
  ): Promise<EventFeed | null> {
    if (start.kind === "now") {
      // Now on the scope's clock: test-mode events are stamped on the brand's test clock.
      const now = await scopeClock(ctx, ctx.db, { brandId: scope.brandId, mode: scope.mode });
      const from = now.getTime() - START_MARGIN_MS;
      return new EventFeed(ctx, scope, from, from);
    }
    const at = await eventTime(ctx.db, { brandId: scope.brandId, mode: scope.mode, id: start.eventId });
    if (!at) return null;
    const feed = new EventFeed(ctx, scope, at.getTime() - LATE_EVENT_WINDOW_MS - 1, at.getTime());
    feed.sent.set(start.eventId, at.getTime());
    return feed;
  }

  /** The next events not sent yet, oldest first (at most FEED_BATCH); marks them sent. */
  async next(): Promise<FedEvent[]> {
    const after = Math.max(this.floor, this.newest - LATE_EVENT_WINDOW_MS);
    for (const [id, at] of this.sent) if (at <= after) this.sent.delete(id);
    const events = await eventsAfter(this.ctx.db, {
      ...this.scope,
      after: new Date(after),
      skip: [...this.sent.keys()],
      limit: FEED_BATCH,
    });
    for (const event of events) {
      const at = event.createdAt.getTime();
      this.sent.set(event.id, at);
      if (at > this.newest) this.newest = at;
    }
    return events;
  }
}
