/**
 * The clock of a scope (brand and mode). Live mode runs on the process clock. A brand's test mode
 * runs on its test clock: the process clock plus the brand's offset, stored in the database
 * (store/test-clocks.ts) so every process reads the same one, moved forward by
 * POST /test-clock/advance (services/test-clock.ts) and never back.
 *
 * Whatever stamps a test-mode time (a stream's creation, start, end and schedule, an event, a
 * delivery's attempt) or compares one with "now" (the sweeper, the catch-up before reads,
 * analytics' periods, the delivery worker's claim) takes the scope's clock from `scopeClock`, or
 * from `clockAt` with the offset read in the same statement as its own rows.
 */
import type { StreamScope } from "../domain/types.ts";
import type { Queryable } from "../store/database.ts";
import { testClockOffset } from "../store/test-clocks.ts";
import type { Clock } from "./context.ts";

/** The clock a scope's test-clock offset (seconds) makes of the process clock's `now`. */
export function clockAt(now: Date, offsetSeconds: number): Date {
  return offsetSeconds === 0 ? now : new Date(now.getTime() + offsetSeconds * 1000);
}

/** The clock of a scope now: the process clock in live mode; in test mode, plus the brand's offset. */
export async function scopeClock(ctx: { clock: Clock }, db: Queryable, scope: StreamScope): Promise<Date> {
  if (scope.mode !== "test") return ctx.clock();
  return clockAt(ctx.clock(), await testClockOffset(db, scope.brandId));
}
