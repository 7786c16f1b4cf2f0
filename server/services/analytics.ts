import { periodStart, summarise, type AnalyticsSummary, type Period } from "../domain/analytics.ts";
import { simulatedViewerCount } from "../domain/lifecycle.ts";
import { analyticsNewest, analyticsRows, analyticsTotals, type AnalyticsRow } from "../store/analytics.ts";
import type { ServiceContext } from "./context.ts";
import { catchUp } from "./lifecycle.ts";
import type { StreamScope } from "../domain/types.ts";

export interface BrandAnalytics extends AnalyticsSummary {
  period: Period;
  brand_id: string;
  /** The period's streams, newest first, in batches read as they are consumed; `viewerCount` is the count to report now. */
  streams: AsyncIterable<AnalyticsRow[]>;
}

/**
 * GET /analytics: the totals are summed by the database; the list is read in batches while the
 * answer is written, so neither time nor memory grows with more than the streams themselves.
 */
export async function brandAnalytics(
  ctx: ServiceContext,
  scope: StreamScope,
  period: Period,
  streamId: string | null,
): Promise<BrandAnalytics> {
  // The scope's clock: a test-mode brand's periods and live audiences are reckoned on its test clock.
  const now = await catchUp(ctx, scope);
  const range = { scope, since: periodStart(period, now), streamId };
  // The list's first batch is read (on PostgreSQL, on another connection) while the totals are summed.
  const streams = withCurrentViewers(analyticsRows(ctx.db, range, await analyticsNewest(ctx.db, range)), now);
  const totals = await analyticsTotals(ctx.db, range);
  const summary = summarise(
    totals.platforms,
    totals.live.map((stream) => simulatedViewerCount(stream, now)),
  );
  return { period, brand_id: scope.brandId, ...summary, streams };
}

/** A live stream's audience is reckoned at the time of the answer, as the totals' is. */
async function* withCurrentViewers(batches: AsyncIterable<AnalyticsRow[]>, now: Date): AsyncGenerator<AnalyticsRow[]> {
  for await (const batch of batches) {
    yield batch.map((row) =>
      row.status === "live" && row.startedAt !== null
        ? { ...row, viewerCount: simulatedViewerCount({ id: row.id, startedAt: new Date(row.startedAt) }, now) }
        : row,
    );
  }
}
