import { settle } from "../domain/billing.ts";
import {
  applyTransition,
  dueTransition,
  eventTypeFor,
  simulatedViewerCount,
  type Transition,
} from "../domain/lifecycle.ts";
import type { Stream, StreamScope } from "../domain/types.ts";
import { adjustWallet } from "../store/brands.ts";
import type { Queryable } from "../store/database.ts";
import { lockDueStreams, lockScopeDueStreams, nextDueTime, updateStream } from "../store/streams.ts";
import type { ServiceContext } from "./context.ts";
import { streamEventRecord } from "./events.ts";
import { clockAt, scopeClock } from "./scope-clock.ts";

/**
 * Moves a locked stream through one transition inside the caller's transaction: freezes the final
 * viewer count, settles billing once when it leaves an active state, and records the event.
 */
export async function transition(
  tx: Queryable,
  ctx: ServiceContext,
  stream: Stream,
  step: Transition,
): Promise<Stream> {
  let next = applyTransition(stream, step, ctx);
  if (step.to !== "live") {
    next = { ...next, viewerCount: simulatedViewerCount(stream, step.at) };
    if (stream.mode === "live") {
      const bill = settle(next);
      await adjustWallet(tx, stream.brandId, {
        creditsCents: -bill.chargedCents,
        creditsHeldCents: -bill.releasedHoldCents,
        minutesUsed: bill.billedMinutes,
      });
      next = { ...next, billedMinutes: bill.billedMinutes, chargedCents: bill.chargedCents };
    }
  }
  const type = eventTypeFor(next.status);
  await updateStream(tx, next, type ? streamEventRecord(type, next, step.at) : undefined);
  return next;
}

/** Applies every transition that is due at `now` (a clock jump may cover several). */
export async function advance(tx: Queryable, ctx: ServiceContext, stream: Stream, now: Date): Promise<Stream> {
  let current = stream;
  for (let step = dueTransition(current, now); step; step = dueTransition(current, now)) {
    current = await transition(tx, ctx, current, step);
  }
  return current;
}

/**
 * The sweeper's unit of work: advances due streams in batches, each batch in its own transaction,
 * until none is due. Works across restarts because every schedule lives in the database. Each
 * stream is advanced to its scope's clock: the process clock, plus its brand's test-clock offset
 * for a test-mode stream (services/scope-clock.ts). With `scope`, only that scope's streams (a
 * read's catch-up), waiting for none that another transaction holds.
 */
export async function sweepDueStreams(
  ctx: ServiceContext,
  { scope, batchSize = 100 }: { scope?: StreamScope; batchSize?: number } = {},
): Promise<number> {
  if (scope) {
    const now = await scopeClock(ctx, ctx.db, scope);
    let moved = 0;
    for (;;) {
      const count = await ctx.db.transaction((tx) =>
        advanceScopeDueStreams(tx, ctx, scope, now, { batchSize, once: true }),
      );
      moved += count;
      if (count < batchSize) return moved;
    }
  }
  const now = ctx.clock();
  let moved = 0;
  for (;;) {
    const count = await ctx.db.transaction(async (tx) => {
      const due = await lockDueStreams(tx, now, batchSize);
      // Each transition locks its brand's row (wallet, minutes). Taking those locks in brand order
      // means two processes sweeping disjoint batches on one PostgreSQL cannot deadlock.
      due.sort((a, b) => (a.stream.brandId < b.stream.brandId ? -1 : a.stream.brandId > b.stream.brandId ? 1 : 0));
      for (const { stream, offsetSeconds } of due) await advance(tx, ctx, stream, clockAt(now, offsetSeconds));
      return due.length;
    });
    moved += count;
    if (count < batchSize) return moved;
  }
}

/**
 * Inside the caller's transaction: advances the scope's streams due at `now` (the scope's clock),
 * skipping those another transaction holds, in batches until none is left (`once`: one batch).
 * Returns how many it moved.
 */
export async function advanceScopeDueStreams(
  tx: Queryable,
  ctx: ServiceContext,
  scope: StreamScope,
  now: Date,
  { batchSize = 100, once = false }: { batchSize?: number; once?: boolean } = {},
): Promise<number> {
  let moved = 0;
  for (;;) {
    const due = await lockScopeDueStreams(tx, now, batchSize, scope);
    for (const stream of due) await advance(tx, ctx, stream, now);
    moved += due.length;
    if (once || due.length < batchSize) return moved;
  }
}

/** Whether a scheduled transition at `nextDueAt` has come by `now`. */
export function isDue(nextDueAt: Date | null, now: Date): boolean {
  return nextDueAt !== null && nextDueAt.getTime() <= now.getTime();
}

/**
 * Before a read, bring the scope's streams up to date so the answer never shows a missed
 * deadline; answers the scope's clock, which the read reckons with.
 */
export async function catchUp(ctx: ServiceContext, scope: StreamScope): Promise<Date> {
  const now = await scopeClock(ctx, ctx.db, scope);
  if (isDue(await nextDueTime(ctx.db, scope), now)) await sweepDueStreams(ctx, { scope });
  return now;
}

/** The live-updating count for a stream that is live now; the frozen count otherwise. */
export function currentViewerCount(stream: Stream, now: Date): number {
  return stream.status === "live" ? simulatedViewerCount(stream, now) : stream.viewerCount;
}
