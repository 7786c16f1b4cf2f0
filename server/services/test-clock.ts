/**
 * The test clock (GET /test-clock, POST /test-clock/advance): a brand's test mode runs on its own
 * clock (services/scope-clock.ts), moved forward here and never back.
 */
import { ApiError } from "../domain/errors.ts";
import type { StreamScope } from "../domain/types.ts";
import { lockBrand } from "../store/brand-lock.ts";
import { lockScopeDueStreams } from "../store/streams.ts";
import { advanceTestClockOffset, testClockOffset } from "../store/test-clocks.ts";
import type { ServiceContext } from "./context.ts";
import { advance, advanceScopeDueStreams } from "./lifecycle.ts";
import { clockAt } from "./scope-clock.ts";

export interface TestClock {
  now: Date;
  offsetSeconds: number;
}

/** GET /test-clock: the brand's test clock (the caller answers a live key `403 test_mode_only`). */
export async function readTestClock(ctx: ServiceContext, brandId: string): Promise<TestClock> {
  const offsetSeconds = await testClockOffset(ctx.db, brandId);
  return { now: clockAt(ctx.clock(), offsetSeconds), offsetSeconds };
}

/**
 * POST /test-clock/advance: moves the brand's test clock `seconds` forward and, in the same
 * transaction, makes every transition of the brand's test-mode streams that is due by the new
 * time (time-outs, scheduled ends, simulated failures), recording their events: when the answer
 * arrives the streams have moved. The deliveries of those events, and the retries the advance made
 * due, are the delivery worker's, within seconds. Nothing of live mode is read or changed.
 *
 * Locks: the streams due by the new time first (waiting for a sweeper or an end that holds one),
 * then the brand (store/brand-lock.ts), then the clock's row: the order in which the sweeper and
 * an end take a stream and then its brand, so an advance never waits on a stream while holding
 * the brand. Two advances of one brand are made one after the other.
 */
export async function advanceTestClock(ctx: ServiceContext, brandId: string, seconds: number): Promise<TestClock> {
  const scope: StreamScope = { brandId, mode: "test" };
  return ctx.db.transaction(async (tx) => {
    // The streams the advance makes due, as far as can be told before the brand is locked.
    const expected = clockAt(ctx.clock(), (await testClockOffset(tx, brandId)) + seconds);
    const held = await lockScopeDueStreams(tx, expected, HELD_AT_MOST, scope, { wait: true });
    if (!(await lockBrand(tx, brandId))) throw new ApiError("unauthorized");
    const offsetSeconds = await advanceTestClockOffset(tx, brandId, seconds, ctx.clock());
    const now = clockAt(ctx.clock(), offsetSeconds);
    for (const stream of held) await advance(tx, ctx, stream, now);
    // What an advance committed meanwhile (its offset adds to this one's), or a stream started
    // meanwhile, made due besides.
    await advanceScopeDueStreams(tx, ctx, scope, now);
    return { now, offsetSeconds };
  });
}

/**
 * The streams an advance locks before the brand at most: more than a brand has active streams
 * (only active streams have a transition to come); any beyond are moved after the brand is locked.
 */
const HELD_AT_MOST = 1_000;
