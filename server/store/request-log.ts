/** The request log's SQL (migration 029): batches written, pages read, old rows deleted in bounded batches. */
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { bool, Column, type InsertOf, int, real, type RecordOf, table, text, time, uuid } from "../domain/table.ts";
import type { Mode, StreamScope } from "../domain/types.ts";
import type { Queryable } from "./database.ts";
import { readRow, selectList } from "./statements.ts";

/** A body this long (bytes of UTF-8) or longer is stored compressed. */
const COMPRESS_FROM_BYTES = 1_024;
const STORED_AS_IS = 0;
const STORED_DEFLATED = 1;

/** Where a long body's UTF-8 is put to be deflated: one body at a time, as the deflating is synchronous. */
const scratch = Buffer.allocUnsafeSlow(16 * 1024);

/**
 * zlib's settings for a body: level 1 (the fastest); a window of 16 KiB, which holds a whole body
 * (at most 10,240 bytes), so compresses as well as the default 32 KiB; and output taken in 2 KiB
 * pieces rather than the default 16 KiB, a buffer allocated outside Node's pool at every call
 * (with the scratch buffer above, 53 → 37 µs for an 8.2 KB answer: docs/performance.md, The
 * request log's cost). Any raw inflate reads what this writes.
 */
const DEFLATE = { level: 1, windowBits: 14, chunkSize: 2_048 } as const;

/**
 * A body as stored (migration 029): a byte saying how, then its UTF-8 as it is or deflated.
 * `compress`: on the embedded database, whose cost of a row grows with its bytes and whose TOAST
 * compression (in WebAssembly) of several kilobytes costs more than deflating them here;
 * PostgreSQL compresses long values itself, natively, off the server's process.
 */
export function encodeBody(text: string | null, compress = true): Buffer | null {
  if (text === null) return null;
  const length = Buffer.byteLength(text, "utf8");
  if (!compress || length < COMPRESS_FROM_BYTES) {
    const stored = Buffer.allocUnsafe(1 + length);
    stored[0] = STORED_AS_IS;
    stored.write(text, 1, "utf8");
    return stored;
  }
  // Encoded into a buffer kept for it: one made for each body (over 4 KiB, outside Node's pool) was garbage at once.
  const input = length <= scratch.length ? scratch.subarray(0, scratch.write(text, 0, "utf8")) : text;
  return Buffer.concat([Buffer.of(STORED_DEFLATED), deflateRawSync(input, DEFLATE)]);
}

/** PostgreSQL's type id of bytea, which its binary array format names. */
const BYTEA_OID = 17;

/**
 * Byte strings as one `bytea[]` parameter in PostgreSQL's binary format (the format of
 * `array_send`: dimensions, a null flag, the element type, the length and lower bound, then each
 * element's length, -1 for null, and bytes). Both engines take a byte buffer parameter as binary,
 * so a batch's bodies go into the statement as they are: as base64 text in a text array they
 * were escaped, sent, parsed character by character and decoded again, in WebAssembly on the
 * embedded database (docs/performance.md, The request log's cost).
 */
export function byteaArray(values: readonly (Uint8Array | null)[]): Buffer {
  let size = 20;
  for (const value of values) size += 4 + (value?.length ?? 0);
  const out = Buffer.allocUnsafe(size);
  out.writeInt32BE(1, 0);
  out.writeInt32BE(values.includes(null) ? 1 : 0, 4);
  out.writeInt32BE(BYTEA_OID, 8);
  out.writeInt32BE(values.length, 12);
  out.writeInt32BE(1, 16);
  let at = 20;
  for (const value of values) {
    if (value === null) {
      at = out.writeInt32BE(-1, at);
      continue;
    }
    at = out.writeInt32BE(value.length, at);
    out.set(value, at);
    at += value.length;
  }
  return out;
}

/** The body's text from its stored bytes. */
export function decodeBody(stored: Uint8Array | null | undefined): string | null {
  if (stored === null || stored === undefined || stored.length === 0) return null;
  const bytes = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  const body = bytes.subarray(1);
  return (bytes[0] === STORED_DEFLATED ? inflateRawSync(body) : body).toString("utf8");
}

/** A body column: stored as encodeBody's bytes, read as its text (null when absent or not selected). */
const storedBody = () => new Column((value) => decodeBody(value as Uint8Array | null | undefined), null, "bytea");
/** Whether a body was cut; false when the body was not selected. */
const cutFlag = () => new Column((value) => value === true, false, "boolean");

/** The request log (migration 029): one row per logged request, its bodies redacted and cut. */
export const REQUEST_LOG = table("request_log", {
  brandId: uuid().writeOnly(),
  mode: text<Mode>(),
  id: uuid(),
  requestId: text(),
  createdAt: time(),
  keyId: uuid(),
  keyName: text(),
  keyLastFour: text().nullable(),
  method: text(),
  path: text(),
  query: text().nullable(),
  status: int(),
  errorCode: text().nullable(),
  durationMs: real(),
  clientAddress: text(),
  idempotencyKey: text().nullable(),
  replayed: bool(),
  requestBody: storedBody(),
  requestBodyTruncated: cutFlag(),
  responseBody: storedBody(),
  responseBodyTruncated: cutFlag(),
});

/** One row as the writer stores it: bodies already redacted and cut. */
export type RequestLogRow = InsertOf<typeof REQUEST_LOG>;
/** A row as read: the entry, and its bodies when asked for. */
export type StoredRequest = RecordOf<typeof REQUEST_LOG>;

const FIELDS = Object.keys(REQUEST_LOG.fields) as Array<keyof RequestLogRow>;
const COLUMNS = FIELDS.map((field) => REQUEST_LOG.columns[field]);

const unnested = FIELDS.map((field, index) => `$${index + 1}::${REQUEST_LOG.fields[field].sqlType}[]`).join(", ");
const counts = FIELDS.length;

/**
 * The batch and each brand and mode's count of rows, in one statement (one round trip, one
 * transaction): the rows, one array per column, and the counts added per brand and mode, in a
 * fixed order so that two processes adding to the same counts never wait on each other in a circle.
 */
const INSERT_SQL = `WITH batch AS (
  INSERT INTO request_log (${COLUMNS.join(", ")})
  SELECT * FROM unnest(${unnested}) AS b (${COLUMNS.join(", ")})
)
INSERT INTO request_log_counts AS c (brand_id, mode, stored)
SELECT * FROM unnest($${counts + 1}::uuid[], $${counts + 2}::text[], $${counts + 3}::bigint[]) AS n (brand_id, mode, stored)
ORDER BY brand_id, mode
ON CONFLICT (brand_id, mode) DO UPDATE SET stored = c.stored + excluded.stored`;

/** Writes `rows` in one statement; `compressBodies` as encodeBody's `compress`. */
export async function insertRequestLogRows(
  db: Queryable,
  rows: readonly RequestLogRow[],
  { compressBodies = true }: { compressBodies?: boolean } = {},
): Promise<void> {
  if (rows.length === 0) return;
  const params: unknown[] = FIELDS.map((field) =>
    field === "requestBody" || field === "responseBody"
      ? byteaArray(rows.map((row) => encodeBody(row[field] as string | null, compressBodies)))
      : rows.map((row) => row[field]),
  );
  const added = new Map<string, { brandId: string; mode: Mode; stored: number }>();
  for (const row of rows) {
    const key = `${row.brandId} ${row.mode}`;
    const known = added.get(key);
    if (known) known.stored += 1;
    else added.set(key, { brandId: row.brandId, mode: row.mode, stored: 1 });
  }
  const perBrand = [...added.values()];
  params.push(
    perBrand.map((one) => one.brandId),
    perBrand.map((one) => one.mode),
    perBrand.map((one) => one.stored),
  );
  await db.query(INSERT_SQL, params);
}

const entryOf = (row: object): StoredRequest => readRow(REQUEST_LOG, row);

/** An entry's columns without its bodies (a page of the log never shows them). */
const ENTRY_COLUMNS = selectList(REQUEST_LOG)
  .split(", ")
  .filter((column) => !column.startsWith("request_body") && !column.startsWith("response_body"))
  .join(", ");

/** What a page of the log is filtered on; each absent filter matches everything. */
export interface RequestLogFilter {
  /** A status, or a class as its bounds (`4xx`: 400 to 499). */
  status: { from: number; to: number } | null;
  method: string | null;
  /** The path, or a path below it. */
  path: string | null;
  /** Entries at or after this time; `sinceId` is the lowest id such an entry can have. */
  since: { at: Date; sinceId: string } | null;
  /** Entries older than this one (its id). */
  before: string | null;
  limit: number;
}

/** `LIKE` takes `%`, `_` and `\` as its own: a path holding them is matched as written. */
function likeEscaped(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

/**
 * A page of the scope's entries, newest first, without bodies; one more than `limit` is read to
 * tell whether there are more. Walks the scope's index from `before` (or the newest) down to
 * `sinceId` at most: a poll for the last second's entries reads only those.
 */
export async function listRequestLog(
  db: Queryable,
  scope: StreamScope,
  filter: RequestLogFilter,
): Promise<{ entries: StoredRequest[]; hasMore: boolean }> {
  const conditions = ["brand_id = $1", "mode = $2"];
  const params: unknown[] = [scope.brandId, scope.mode];
  const add = (condition: (n: string) => string, ...values: unknown[]) => {
    const numbers = values.map((value) => {
      params.push(value);
      return `$${params.length}`;
    });
    conditions.push(condition(numbers.join(",")));
    return numbers;
  };
  if (filter.before !== null) add((n) => `id < ${n}::uuid`, filter.before);
  if (filter.since !== null) {
    add((n) => `id >= ${n}::uuid`, filter.since.sinceId);
    add((n) => `created_at >= ${n}`, filter.since.at);
  }
  if (filter.status !== null) {
    const [from, to] = [filter.status.from, filter.status.to];
    params.push(from, to);
    conditions.push(`status BETWEEN $${params.length - 1} AND $${params.length}`);
  }
  if (filter.method !== null) add((n) => `method = ${n}`, filter.method);
  if (filter.path !== null) {
    const path = filter.path.replace(/\/+$/, "") || "/";
    params.push(path, path === "/" ? "/%" : `${likeEscaped(path)}/%`);
    conditions.push(`(path = $${params.length - 1} OR path LIKE $${params.length})`);
  }
  params.push(filter.limit + 1);
  const rows = await db.query(
    `SELECT ${ENTRY_COLUMNS} FROM request_log WHERE ${conditions.join(" AND ")} ORDER BY id DESC LIMIT $${params.length}`,
    params,
  );
  return { entries: rows.slice(0, filter.limit).map(entryOf), hasMore: rows.length > filter.limit };
}

/** The scope's newest entry with this request id, with its bodies, or null. */
export async function findRequestLogEntry(
  db: Queryable,
  scope: StreamScope,
  requestId: string,
): Promise<StoredRequest | null> {
  const [row] = await db.query(
    `SELECT ${ENTRY_COLUMNS}, request_body, request_body_truncated, response_body, response_body_truncated
     FROM request_log WHERE brand_id = $1 AND mode = $2 AND request_id = $3 ORDER BY id DESC LIMIT 1`,
    [scope.brandId, scope.mode, requestId],
  );
  return row ? entryOf(row) : null;
}

/**
 * The end of a retention statement whose CTEs name the rows to go as `doomed` (brand, mode, id):
 * deletes them, takes them off their brand's and mode's counts, and selects how many went.
 */
const DELETE_DOOMED = `gone AS (
       DELETE FROM request_log l USING doomed d
       WHERE l.brand_id = d.brand_id AND l.mode = d.mode AND l.id = d.id
       RETURNING l.brand_id, l.mode
     ),
     counted AS (SELECT brand_id, mode, count(*) AS n FROM gone GROUP BY brand_id, mode),
     updated AS (
       UPDATE request_log_counts c SET stored = greatest(0, c.stored - counted.n)
       FROM counted WHERE c.brand_id = counted.brand_id AND c.mode = counted.mode
     )
     SELECT coalesce(sum(n), 0) AS deleted FROM counted`;

/**
 * Deletes, in one statement, at most `batch` rows older than `beforeId` (the lowest UUIDv7 of the
 * cut-off time) across every brand and mode with rows, and takes them off their counts. Each brand's
 * oldest rows are found through its own index; returns how many went.
 */
export async function deleteExpiredRequestLog(db: Queryable, beforeId: string, batch: number): Promise<number> {
  const [row] = await db.query<{ deleted: number | string | null }>(
    `WITH doomed AS (
       SELECT r.brand_id, r.mode, r.id FROM request_log_counts c
       CROSS JOIN LATERAL (
         SELECT brand_id, mode, id FROM request_log
         WHERE brand_id = c.brand_id AND mode = c.mode AND id < $1::uuid ORDER BY id LIMIT $2
       ) r
       WHERE c.stored > 0
       LIMIT $2
     ),
     ${DELETE_DOOMED}`,
    [beforeId, batch],
  );
  return Number(row?.deleted ?? 0);
}

/**
 * Deletes, in one statement, at most `batch` of the oldest rows of the brands and modes that hold
 * more than `ceiling` (those most over it first), never more than each is over, and takes them off
 * their counts; returns how many went.
 */
export async function deleteOverCeiling(db: Queryable, ceiling: number, batch: number): Promise<number> {
  const [row] = await db.query<{ deleted: number | string | null }>(
    `WITH over AS (
       SELECT brand_id, mode, stored - $1 AS excess FROM request_log_counts
       WHERE stored > $1 ORDER BY stored DESC LIMIT 16
     ),
     doomed AS (
       SELECT r.brand_id, r.mode, r.id FROM over o
       CROSS JOIN LATERAL (
         SELECT brand_id, mode, id FROM request_log
         WHERE brand_id = o.brand_id AND mode = o.mode ORDER BY id LIMIT least(o.excess, $2)
       ) r
       LIMIT $2
     ),
     ${DELETE_DOOMED}`,
    [ceiling, batch],
  );
  return Number(row?.deleted ?? 0);
}

/** Rows a brand and mode holds, as counted. */
export async function storedRequestCount(db: Queryable, brandId: string, mode: Mode): Promise<number> {
  const [row] = await db.query<{ stored: number | string }>(
    "SELECT stored FROM request_log_counts WHERE brand_id = $1 AND mode = $2",
    [brandId, mode],
  );
  return Number(row?.stored ?? 0);
}
