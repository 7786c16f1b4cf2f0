import { periodStart, summarise, type Period } from "../domain/analytics.ts";
import { streamsCreatedSince, type StreamScope } from "../store/streams.ts";
import type { ServiceContext } from "./context.ts";
import { catchUp, currentViewerCount } from "./lifecycle.ts";

export async function brandAnalytics(ctx: ServiceContext, scope: StreamScope, period: Period, streamId: string | null) {
  await catchUp(ctx, scope);
  const now = ctx.clock();
  const streams = (await streamsCreatedSince(ctx.db, scope, periodStart(period, now), streamId)).map((stream) => ({
    ...stream,
    currentViewers: currentViewerCount(stream, now),
  }));
  return { period, brand_id: scope.brandId, ...summarise(streams), streams };
}
