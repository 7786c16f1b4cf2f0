import type { PlatformShare } from "../domain/analytics.ts";
import type { StreamStatus, Vertical } from "../domain/types.ts";
import type { Queryable } from "./database.ts";
import type { StreamScope } from "./streams.ts";

/** Which of the scope's streams an analytics answer covers: created since `since`, optionally one stream. */
export interface AnalyticsRange {
  scope: StreamScope;
  since: Date;
  streamId: string | null;
}

export interface AnalyticsTotals {
  /** Per platform, in the order each first appears in the list (newest first). */
  platforms: PlatformShare[];
  /** The live streams of the period, whose viewer counts are reckoned at the time of the answer. */
  live: Array<{ id: string; startedAt: Date }>;
  /** The newest stream of the period: the list starts there, so streams created meanwhile are in neither. */
  newest: { createdAt: string; id: string } | null;
}

/** One stream of the list, its times in epoch milliseconds. */
export interface AnalyticsRow {
  id: string;
  status: StreamStatus;
  viewerCount: number;
  startedAt: number | null;
  endedAt: number | null;
  platform: string;
  vertical: Vertical;
}

const RANGE = "brand_id = $1 AND mode = $2 AND created_at >= $3";

function rangeParams({ scope, since, streamId }: AnalyticsRange): { where: string; params: unknown[] } {
  return streamId === null
    ? { where: RANGE, params: [scope.brandId, scope.mode, since] }
    : { where: `${RANGE} AND id = $4`, params: [scope.brandId, scope.mode, since, streamId] };
}

/**
 * The period's totals per platform, summed in the database. Minutes as billing counts them:
 * whole seconds (of millisecond timestamps) rounded up to minutes. None of these reads is cached:
 * `since` is a time, never asked again.
 */
export async function analyticsTotals(db: Queryable, range: AnalyticsRange): Promise<AnalyticsTotals> {
  const { where, params } = rangeParams(range);
  const platforms = await db.query<{ platform: string; streams: number; settled_viewers: string; minutes: string; live: number }>(
    `SELECT platform, count(*)::int AS streams,
            coalesce(sum(viewer_count) FILTER (WHERE status <> 'live'), 0)::bigint AS settled_viewers,
            coalesce(sum(ceil(greatest(0, floor(extract(epoch FROM date_trunc('milliseconds', ended_at) - date_trunc('milliseconds', started_at)))) / 60))
                     FILTER (WHERE started_at IS NOT NULL AND ended_at IS NOT NULL), 0)::bigint AS minutes,
            count(*) FILTER (WHERE status = 'live')::int AS live
     FROM (
       SELECT coalesce(nullif(platform, ''), 'unknown') AS platform, status, viewer_count, started_at, ended_at,
              row_number() OVER (ORDER BY created_at DESC, id DESC) AS place
       FROM streams WHERE ${where}
     ) period
     GROUP BY platform ORDER BY min(place)`,
    params,
    { cache: false },
  );
  const live = await db.query<{ id: string; started_at: Date | null }>(`SELECT id, started_at FROM streams WHERE ${where} AND status = 'live'`, params, { cache: false });
  // The time as text, exact to the microsecond, for the list's first batch to start from.
  const [newest] = await db.query<{ created_at: string; id: string }>(`SELECT created_at::text AS created_at, id FROM streams WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT 1`, params, {
    cache: false,
  });
  return {
    platforms: platforms.map((row) => ({ platform: row.platform, streams: row.streams, settledViewers: Number(row.settled_viewers), minutes: Number(row.minutes), live: row.live })),
    live: live.filter((row) => row.started_at !== null).map((row) => ({ id: row.id, startedAt: new Date(row.started_at!) })),
    newest: newest ? { createdAt: newest.created_at, id: newest.id } : null,
  };
}

/** Streams listed per statement: large enough that statements are few, small enough to hold. */
export const ANALYTICS_BATCH = 2_000;

/**
 * The period's streams, newest first, from `totals.newest` down, in batches read by key (each
 * batch starts after the last one's final stream, so no batch skips rows). Each batch is one row
 * of one JSON text, so the embedded database converts one field per batch rather than seven per
 * stream; no batch is cached. Other requests may run between batches: a stream that changes
 * meanwhile is listed as it is when its batch is read.
 */
export async function* analyticsRows(db: Queryable, range: AnalyticsRange, newest: AnalyticsTotals["newest"], batchSize = ANALYTICS_BATCH): AsyncGenerator<AnalyticsRow[]> {
  if (newest === null) return;
  const { where, params } = rangeParams(range);
  const at = params.length + 1;
  // The key of the last stream listed; its time as the database wrote it (microseconds kept).
  let after: { createdAt: string; id: string; inclusive: boolean } = { createdAt: newest.createdAt, id: newest.id, inclusive: true };
  for (;;) {
    const [row] = await db.query<{ batch: string | null }>(
      `SELECT json_agg(json_build_array(id, status, viewer_count, floor(extract(epoch FROM started_at) * 1000), floor(extract(epoch FROM ended_at) * 1000),
                                        platform, vertical, created_at) ORDER BY created_at DESC, id DESC)::text AS batch
       FROM (
         SELECT id, status, viewer_count, started_at, ended_at, platform, vertical, created_at FROM streams
         WHERE ${where} AND created_at <= $${at} AND (created_at, id) ${after.inclusive ? "<=" : "<"} ($${at}, $${at + 1})
         ORDER BY created_at DESC, id DESC LIMIT $${at + 2}
       ) batch`,
      [...params, after.createdAt, after.id, batchSize],
      { cache: false },
    );
    if (!row?.batch) return;
    const tuples = JSON.parse(row.batch) as Array<[string, StreamStatus, number, number | null, number | null, string, Vertical, string]>;
    yield tuples.map(([id, status, viewerCount, startedAt, endedAt, platform, vertical]) => ({ id, status, viewerCount, startedAt, endedAt, platform, vertical }));
    if (tuples.length < batchSize) return;
    const last = tuples[tuples.length - 1]!;
    after = { createdAt: last[7], id: last[0], inclusive: false };
  }
}
