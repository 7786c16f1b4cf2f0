import { nextDueAt } from "../domain/lifecycle.ts";
import { type NewStream, STREAMS, type Stream, type StreamScope, type StreamStatus } from "../domain/types.ts";
import { dateOrNull } from "./columns.ts";
import type { Queryable } from "./database.ts";
import { type EventRecord, eventInsert, eventParameters } from "./outbox.ts";
import { assignments, insertRow, pick, readRow, selectList } from "./statements.ts";

const STREAM_STATUSES: ReadonlySet<string> = new Set<StreamStatus>(["preparing", "live", "ended", "error"]);

type StreamRow = Record<string, unknown>;

const streamFromRow = (row: StreamRow): Stream => readRow(STREAMS, row);

// Every column a stream is read from (not the write-only `script` and `next_due_at`), and the creator's public id.
const STREAM_COLUMNS = selectList(STREAMS, { alias: "s", computed: { creatorPublicId: "c.id" } });
const SELECT_STREAM = `SELECT ${STREAM_COLUMNS} FROM streams s LEFT JOIN creators c ON c.id = s.creator_id`;

/** Stores a new stream, and returns it as stored (with the creator's public id, and any column's default). */
export async function insertStream(db: Queryable, stream: NewStream, script: string | null): Promise<Stream> {
  const insert = insertRow(STREAMS, { ...stream, script, nextDueAt: nextDueAt(stream) }, `RETURNING *`);
  const [row] = await db.query<StreamRow>(
    `WITH s AS (${insert.text}) SELECT ${STREAM_COLUMNS} FROM s LEFT JOIN creators c ON c.id = s.creator_id`,
    insert.params,
  );
  return streamFromRow(row!);
}

/** The fields a lifecycle step or a launch may change. */
const CHANGING = [
  "status",
  "wsUrl",
  "viewerToken",
  "agentDispatched",
  "dispatchMethod",
  "viewerCount",
  "startedAt",
  "endedAt",
  "joinAt",
  "failAt",
  "timeoutAt",
  "billedMinutes",
  "chargedCents",
] as const satisfies ReadonlyArray<keyof Stream>;

/**
 * Writes every field a lifecycle step or launch may change, and the next due time derived from
 * them; with `recorded`, the event of the change in the same statement.
 */
export async function updateStream(db: Queryable, stream: Stream, recorded?: EventRecord): Promise<void> {
  const { set, params, at } = assignments(STREAMS, { ...pick(stream, CHANGING), nextDueAt: nextDueAt(stream) }, 2);
  const billed = at("billedMinutes");
  const update = `UPDATE streams SET ${set},
       settled_at = CASE WHEN ${billed}::int IS NULL THEN settled_at ELSE coalesce(settled_at, now()) END
     WHERE id = $1`;
  const values = [stream.id, ...params];
  await db.query(
    recorded
      ? `WITH updated AS (${update} RETURNING 1) ${eventInsert({ first: values.length + 1, from: "updated" })}`
      : update,
    recorded ? [...values, ...eventParameters(recorded)] : values,
  );
}

/**
 * A stream by id, within the scope. The scope is tested with `IS TRUE`, which no index can
 * serve, so the look-up is always the primary key's: without statistics (the embedded database
 * has no autovacuum to gather them) the planner may otherwise walk the (brand, mode, status, …)
 * index over every stream of the brand to find one id.
 */
export async function findStream(db: Queryable, scope: StreamScope, id: string): Promise<Stream | null> {
  const [row] = await db.query<StreamRow>(FIND_STREAM, [id, scope.brandId, scope.mode]);
  return row ? streamFromRow(row) : null;
}

/** findStream, the row locked until the transaction ends. */
export async function lockStream(db: Queryable, scope: StreamScope, id: string): Promise<Stream | null> {
  const [row] = await db.query<StreamRow>(FIND_STREAM_FOR_UPDATE, [id, scope.brandId, scope.mode]);
  return row ? streamFromRow(row) : null;
}

/**
 * findStream with the scope's test-clock offset in seconds (0 in live mode), read in the same
 * statement: what a read needs to tell whether the stream has a transition due on its clock.
 */
export async function findStreamWithClock(
  db: Queryable,
  scope: StreamScope,
  id: string,
): Promise<{ stream: Stream; clockOffsetSeconds: number } | null> {
  const [row] = await db.query<StreamRow & { scope_clock_offset: string | number | null }>(FIND_STREAM_WITH_CLOCK, [
    id,
    scope.brandId,
    scope.mode,
  ]);
  return row ? { stream: streamFromRow(row), clockOffsetSeconds: Number(row.scope_clock_offset ?? 0) } : null;
}

// Written once: both engines find their prepared statement by its text.
const FIND_STREAM = `${SELECT_STREAM} WHERE s.id = $1 AND (s.brand_id = $2 AND s.mode = $3) IS TRUE`;
const FIND_STREAM_WITH_CLOCK = `SELECT ${STREAM_COLUMNS},
    (SELECT offset_seconds FROM test_clocks WHERE brand_id = $2 AND $3::text = 'test') AS scope_clock_offset
  FROM streams s LEFT JOIN creators c ON c.id = s.creator_id
  WHERE s.id = $1 AND (s.brand_id = $2 AND s.mode = $3) IS TRUE`;
const FIND_STREAM_FOR_UPDATE = `${FIND_STREAM} FOR UPDATE OF s`;

export async function countActiveStreams(db: Queryable, scope: StreamScope): Promise<number> {
  const [row] = await db.query<{ count: number }>(
    "SELECT count(*)::int AS count FROM streams WHERE brand_id = $1 AND mode = $2 AND status IN ('preparing', 'live')",
    [scope.brandId, scope.mode],
  );
  return row!.count;
}

/** The ids of the scope's active streams, oldest first, at most `limit`: what a concurrency_limit answer names. */
export async function activeStreamIds(db: Queryable, scope: StreamScope, limit: number): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    "SELECT id FROM streams WHERE brand_id = $1 AND mode = $2 AND status IN ('preparing', 'live') ORDER BY created_at, id LIMIT $3",
    [scope.brandId, scope.mode, limit],
  );
  return rows.map((row) => row.id);
}

/** The count columns of stream_counts (migration 005) a list total adds up: all four, or the filter's one. */
const COUNTED: Record<StreamStatus, string> = { preparing: "preparing", live: "live", ended: "ended", error: "error" };
const ALL_COUNTED = "preparing + live + ended + error";

/**
 * One page of the scope's streams, newest first (`id` breaks ties so pages never overlap or
 * skip), with how many match the filter, the earliest scheduled transition among all the
 * scope's streams (due when it is not after the scope's now) and the scope's test-clock offset
 * (the scope's now is the real time plus it): one statement whose work does not grow with
 * the brand. The total is read from stream_counts and the deadline from the first entry of the
 * (brand, mode, next_due_at) index. The unfiltered page is found by position (stream_positions:
 * offset k is position total − 1 − k), however deep; a status-filtered page walks that status's
 * index entries up to its offset (index only, without reading the rows it skips).
 */
export async function streamPage(
  db: Queryable,
  scope: StreamScope,
  query: { status: string | null; limit: number; offset: number },
): Promise<{ streams: Stream[]; total: number; nextDueAt: Date | null; clockOffsetSeconds: number }> {
  const status = query.status;
  const known = status === null || STREAM_STATUSES.has(status);
  // An unrecognised status matches nothing; it is not sent to the database, which would refuse
  // some strings outright (a NUL character) and turn a harmless filter into a 500.
  const text =
    status === null ? PAGE_STATEMENTS.all : known ? PAGE_STATEMENTS[status as StreamStatus] : PAGE_STATEMENTS.unknown;
  const rows = await db.query<PageRow>(
    text,
    status !== null && known
      ? [scope.brandId, scope.mode, query.limit, query.offset, status]
      : [scope.brandId, scope.mode, query.limit, query.offset],
  );
  const first = rows[0]!;
  const streams: Stream[] = [];
  for (const row of rows) if (row.id != null) streams.push(streamFromRow(row as StreamRow));
  return {
    streams,
    total: first.scope_total,
    nextDueAt: dateOrNull(first.scope_next_due_at),
    clockOffsetSeconds: Number(first.scope_clock_offset ?? 0),
  };
}

type PageRow = Partial<StreamRow> & {
  scope_total: number;
  scope_next_due_at: Date | null;
  scope_clock_offset: string | number | null;
};

/** The scope's earliest scheduled transition: the first entry of the (brand, mode, next_due_at) index. */
const NEXT_DUE =
  "SELECT next_due_at FROM streams WHERE brand_id = $1 AND mode = $2 AND next_due_at IS NOT NULL ORDER BY next_due_at LIMIT 1";

/** The scope's test-clock offset in seconds (migration 032): none in live mode, or for a brand that never advanced it. */
const SCOPE_CLOCK_OFFSET = "SELECT offset_seconds FROM test_clocks WHERE brand_id = $1 AND $2::text = 'test'";

/**
 * The page statement of streamPage, whose total adds up `counted` (columns of stream_counts) and
 * whose rows are `page`. The LEFT JOIN keeps the totals row when the page is empty. A subquery
 * rather than a CTE, so the statement starts with SELECT: a read, run again on PostgreSQL after a
 * lost connection.
 */
function pageStatement(counted: string, page: string): string {
  return `SELECT totals.*, page.* FROM (
       SELECT coalesce((SELECT ${counted} FROM stream_counts WHERE brand_id = $1 AND mode = $2), 0)::int AS scope_total,
              (${NEXT_DUE}) AS scope_next_due_at,
              (${SCOPE_CLOCK_OFFSET}) AS scope_clock_offset
     ) totals LEFT JOIN LATERAL (${page}) page ON true`;
}

const STATUS_PAGE = `${SELECT_STREAM} JOIN (
             SELECT id FROM streams WHERE brand_id = $1 AND mode = $2 AND status = $5
             ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4
           ) listed ON listed.id = s.id
           ORDER BY s.created_at DESC, s.id DESC`;

/**
 * The page statements, written once: a list request then hands the database (whose prepared
 * statements are found by their text) the same string every time rather than a new 1.5 KB one. Parameters: $1 brand, $2 mode, $3 limit, $4 offset, $5 status.
 */
const PAGE_STATEMENTS: Record<StreamStatus | "all" | "unknown", string> = {
  all: pageStatement(
    ALL_COUNTED,
    `${SELECT_STREAM} JOIN stream_positions p ON p.stream_id = s.id
         WHERE p.brand_id = $1 AND p.mode = $2
           AND p.position < totals.scope_total - $4::bigint AND p.position >= totals.scope_total - $4::bigint - $3::bigint
         ORDER BY p.position DESC`,
  ),
  preparing: pageStatement(COUNTED.preparing, STATUS_PAGE),
  live: pageStatement(COUNTED.live, STATUS_PAGE),
  ended: pageStatement(COUNTED.ended, STATUS_PAGE),
  error: pageStatement(COUNTED.error, STATUS_PAGE),
  unknown: pageStatement("0", `${SELECT_STREAM} WHERE false LIMIT $3 OFFSET $4`),
};

/** A stream locked for its due transitions, with its scope's test-clock offset (0 in live mode). */
export interface DueStream {
  stream: Stream;
  offsetSeconds: number;
}

type DueRow = StreamRow & { clock_offset_seconds: string | number };

const dueStreamOf = (row: DueRow): DueStream => ({
  stream: streamFromRow(row),
  offsetSeconds: Number(row.clock_offset_seconds),
});

/**
 * Locks streams with a due transition, every brand's, each with its scope's test-clock offset:
 * a live-mode stream is due when its next_due_at has come on the real clock (`now`), a test-mode
 * one when it has come on its brand's test clock (`now` plus the brand's offset, migration 032).
 * Two statements, each walking an index: the streams due on the real clock (streams_due; the
 * offset is never negative, so they are due in either mode), then, with the places left, the
 * test-mode streams that only an advanced test clock made due (per brand with a clock, a range of
 * streams_brand_mode_due). SKIP LOCKED lets several server processes sweep at once without
 * waiting on, or double-applying, each other's rows.
 */
export async function lockDueStreams(db: Queryable, now: Date, limit: number): Promise<DueStream[]> {
  const due = (await db.query<DueRow>(LOCK_DUE, [now, limit])).map(dueStreamOf);
  if (due.length >= limit) return due;
  const ahead = await db.query<DueRow>(LOCK_DUE_AHEAD, [now, limit - due.length]);
  return [...due, ...ahead.map(dueStreamOf)];
}

const LOCK_DUE = `SELECT ${STREAM_COLUMNS}, coalesce(tc.offset_seconds, 0) AS clock_offset_seconds
     FROM streams s LEFT JOIN creators c ON c.id = s.creator_id
     LEFT JOIN test_clocks tc ON s.mode = 'test' AND tc.brand_id = s.brand_id
     WHERE s.next_due_at <= $1
     ORDER BY s.next_due_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED`;

const LOCK_DUE_AHEAD = `SELECT ${STREAM_COLUMNS}, tc.offset_seconds AS clock_offset_seconds
     FROM test_clocks tc
     JOIN streams s ON s.brand_id = tc.brand_id AND s.mode = 'test'
       AND s.next_due_at > $1::timestamptz AND s.next_due_at <= $1::timestamptz + tc.offset_seconds * interval '1 second'
     LEFT JOIN creators c ON c.id = s.creator_id
     WHERE tc.offset_seconds > 0
     ORDER BY s.next_due_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED`;

/**
 * Locks the scope's streams with a transition due at `now` (the scope's clock: services/
 * test-clock.ts), in next_due_at order. SKIP LOCKED by default, so a read's catch-up never waits
 * for a sweeper; `wait` (an advance of the test clock) waits for the rows another transaction
 * holds, so every transition due by the new time is made before it answers.
 */
export async function lockScopeDueStreams(
  db: Queryable,
  now: Date,
  limit: number,
  scope: StreamScope,
  { wait = false } = {},
): Promise<Stream[]> {
  const rows = await db.query<StreamRow>(wait ? LOCK_SCOPE_DUE_WAITING : LOCK_SCOPE_DUE, [
    now,
    limit,
    scope.brandId,
    scope.mode,
  ]);
  return rows.map(streamFromRow);
}

const SCOPE_DUE = `${SELECT_STREAM} WHERE s.next_due_at <= $1 AND s.brand_id = $3 AND s.mode = $4
     ORDER BY s.next_due_at LIMIT $2 FOR UPDATE OF s`;
const LOCK_SCOPE_DUE = `${SCOPE_DUE} SKIP LOCKED`;
const LOCK_SCOPE_DUE_WAITING = SCOPE_DUE;

/**
 * The earliest scheduled transition of the scope's streams, so reads open a write transaction
 * only when something is due.
 */
export async function nextDueTime(db: Queryable, scope: StreamScope): Promise<Date | null> {
  const [row] = await db.query<{ next_due_at: Date | null }>(NEXT_DUE, [scope.brandId, scope.mode]);
  return dateOrNull(row?.next_due_at ?? null);
}
