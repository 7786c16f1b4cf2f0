import type { PlatformShare } from "../domain/analytics.ts";
import type { StreamScope, StreamStatus, Vertical } from "../domain/types.ts";
import type { Queryable } from "./database.ts";

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
}

/** The key of a stream in list order: its creation time as the database wrote it (microseconds kept), then its id. */
export interface ListKey {
  createdAt: string;
  id: string;
}

/** One stream of the list, its times as ISO 8601 UTC strings with milliseconds (as `Date#toISOString` writes them). */
export interface AnalyticsRow {
  id: string;
  status: StreamStatus;
  viewerCount: number;
  startedAt: string | null;
  endedAt: string | null;
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
 * The period's totals per platform, summed in the database, and its live streams. Minutes as
 * billing counts them: whole seconds (of millisecond timestamps) rounded up to minutes.
 */
export async function analyticsTotals(db: Queryable, range: AnalyticsRange): Promise<AnalyticsTotals> {
  const { where, params } = rangeParams(range);
  const platforms = await db.query<{
    platform: string;
    streams: number;
    settled_viewers: string;
    minutes: string;
    live: number;
  }>(
    `SELECT platform, count(*)::int AS streams,
            coalesce(sum(viewer_count) FILTER (WHERE status <> 'live'), 0)::bigint AS settled_viewers,
            coalesce(sum((greatest(0, (extract(epoch FROM date_trunc('milliseconds', ended_at) - date_trunc('milliseconds', started_at)) * 1000)::bigint) / 1000 + 59) / 60)
                     FILTER (WHERE started_at IS NOT NULL AND ended_at IS NOT NULL), 0)::bigint AS minutes,
            count(*) FILTER (WHERE status = 'live')::int AS live
     FROM (
       SELECT coalesce(nullif(platform, ''), 'unknown') AS platform, status, viewer_count, started_at, ended_at,
              row_number() OVER (ORDER BY created_at DESC, id DESC) AS place
       FROM streams WHERE ${where}
     ) period
     GROUP BY platform ORDER BY min(place)`,
    params,
  );
  const live = await db.query<{ id: string; started_at: Date | null }>(
    `SELECT id, started_at FROM streams WHERE ${where} AND status = 'live'`,
    params,
  );
  return {
    platforms: platforms.map((row) => ({
      platform: row.platform,
      streams: row.streams,
      settledViewers: Number(row.settled_viewers),
      minutes: Number(row.minutes),
      live: row.live,
    })),
    live: live
      .filter((row) => row.started_at !== null)
      .map((row) => ({ id: row.id, startedAt: new Date(row.started_at!) })),
  };
}

/**
 * The newest stream of the period. The list starts there, so a stream created after it is in
 * neither the list nor (unless it came first) the totals.
 */
export async function analyticsNewest(db: Queryable, range: AnalyticsRange): Promise<ListKey | null> {
  const { where, params } = rangeParams(range);
  const [newest] = await db.query<{ created_at: string; id: string }>(
    `SELECT created_at::text AS created_at, id FROM streams WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT 1`,
    params,
  );
  return newest ? { createdAt: newest.created_at, id: newest.id } : null;
}

/** Streams listed per statement: large enough that statements are few, small enough to hold. */
export const ANALYTICS_BATCH = 2_000;

/**
 * The period's streams, newest first, from `newest` down, in batches read by key (each
 * batch starts after the last one's final stream, so no batch skips rows). Each batch is one text
 * of one line per stream, so the embedded database converts one field per batch rather than
 * seven per stream (and building it is cheaper than JSON on either engine).
 * Other requests may run between batches: a stream that changes meanwhile is listed as it is
 * when its batch is read.
 */
export function analyticsRows(
  db: Queryable,
  range: AnalyticsRange,
  newest: ListKey | null,
  batchSize = ANALYTICS_BATCH,
): AsyncIterable<AnalyticsRow[]> {
  const { where, params } = rangeParams(range);
  const at = params.length + 1;
  // Per line: id, status, viewers, started and ended in UTC (or empty), the key's time, then
  // vertical and platform as JSON strings (free text: they may hold commas).
  const read = async (after: ListKey, inclusive: boolean): Promise<{ rows: AnalyticsRow[]; last: ListKey } | null> => {
    const [row] = await db.query<{ batch: string | null }>(
      `SELECT string_agg(concat_ws(',', id, status, viewer_count, coalesce(timezone('UTC', started_at)::text, ''), coalesce(timezone('UTC', ended_at)::text, ''),
                                   created_at, to_json(vertical)::text, to_json(platform)::text), E'\n' ORDER BY created_at DESC, id DESC) AS batch
       FROM (
         SELECT id, status, viewer_count, started_at, ended_at, platform, vertical, created_at FROM streams
         WHERE ${where} AND created_at <= $${at} AND (created_at, id) ${inclusive ? "<=" : "<"} ($${at}, $${at + 1})
         ORDER BY created_at DESC, id DESC LIMIT $${at + 2}
       ) batch`,
      [...params, after.createdAt, after.id, batchSize],
    );
    if (!row?.batch) return null;
    const rows: AnalyticsRow[] = [];
    let createdAt = "";
    for (const line of row.batch.split("\n")) {
      const fields = line.split(",", 6);
      const [vertical, platform] = labels(line.slice(fields.join(",").length + 1));
      rows.push({
        id: fields[0]!,
        status: fields[1] as StreamStatus,
        viewerCount: Number(fields[2]),
        startedAt: isoFromUtc(fields[3]!),
        endedAt: isoFromUtc(fields[4]!),
        platform,
        vertical: vertical as Vertical,
      });
      createdAt = fields[5]!;
    }
    return { rows, last: { createdAt, id: rows[rows.length - 1]!.id } };
  };
  // The next batch is asked for before this one is handed on, so on PostgreSQL the database
  // reads it while this process writes the last one out. A batch nobody waits for any more (the
  // client left) must not fail unobserved.
  const ahead = (promise: ReturnType<typeof read>) => {
    promise.catch(() => undefined);
    return promise;
  };
  // The first batch is asked for at once, before anyone iterates.
  let pending: ReturnType<typeof read> | null = newest === null ? null : ahead(read(newest, true));
  return (async function* () {
    while (pending) {
      const batch: Awaited<ReturnType<typeof read>> = await pending;
      if (!batch) return;
      pending = batch.rows.length < batchSize ? null : ahead(read(batch.last, false));
      yield batch.rows;
    }
  })();
}

/** Vertical and platform from their JSON strings; a brand's streams have few distinct pairs. */
const LABELS = new Map<string, [string, string]>();
function labels(json: string): [string, string] {
  let pair = LABELS.get(json);
  if (pair === undefined) {
    pair = JSON.parse(`[${json}]`) as [string, string];
    if (LABELS.size >= 1_000) LABELS.clear();
    LABELS.set(json, pair);
  }
  return pair;
}

const UTC_TEXT = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?$/;

/**
 * `2026-11-20 12:00:00.5` (a UTC timestamp as the database writes it) → `2026-11-20T12:00:00.500Z`,
 * what `Date#toISOString` writes: fractions cut to milliseconds, as a `Date` cuts them. Times
 * outside years 1000–9999 take the slow way.
 */
function isoFromUtc(text: string): string | null {
  if (text === "") return null;
  if (!UTC_TEXT.test(text)) return new Date(`${text.replace(" ", "T")}Z`).toISOString();
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${text.slice(20, 23).padEnd(3, "0")}Z`;
}
