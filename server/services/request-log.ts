/**
 * The request log's reads (GET /requests, GET /requests/{request_id} and the dashboard's Logs
 * page) and its retention, which the lifecycle sweeper runs. The writing is
 * observability/request-log.ts's.
 */
import { ApiError } from "../domain/errors.ts";
import { lowestTimeOrderedId } from "../domain/time-ordered-id.ts";
import type { StreamScope } from "../domain/types.ts";
import type { Database, Queryable } from "../store/database.ts";
import {
  deleteExpiredRequestLog,
  deleteOverCeiling,
  findRequestLogEntry,
  listRequestLog,
  type RequestLogFilter,
  type StoredRequest,
} from "../store/request-log.ts";
import type { ServiceContext } from "./context.ts";

/** A page's query, validated against the contract (the limit clamped before). */
export interface RequestLogQuery {
  status?: string | undefined;
  method?: string | undefined;
  path?: string | undefined;
  since?: string | undefined;
  starting_after?: string | undefined;
  limit?: number | undefined;
}

/** `429` → 429…429; `4xx` → 400…499. */
function statusRange(status: string | undefined): RequestLogFilter["status"] {
  if (status === undefined) return null;
  const hundreds = Number(status[0]) * 100;
  return status.endsWith("xx") ? { from: hundreds, to: hundreds + 99 } : { from: Number(status), to: Number(status) };
}

export function requestLogFilter(query: RequestLogQuery, defaultLimit = 20): RequestLogFilter {
  const since = query.since === undefined ? null : new Date(query.since);
  return {
    status: statusRange(query.status),
    method: query.method ?? null,
    path: query.path ?? null,
    since: since === null ? null : { at: since, sinceId: lowestTimeOrderedId(since.getTime()) },
    before: query.starting_after?.toLowerCase() ?? null,
    limit: query.limit ?? defaultLimit,
  };
}

export function listRequests(
  ctx: Pick<ServiceContext, "db">,
  scope: StreamScope,
  query: RequestLogQuery,
): Promise<{ entries: StoredRequest[]; hasMore: boolean }> {
  return listRequestLog(ctx.db, scope, requestLogFilter(query));
}

/** The scope's logged request with this id (the newest of that id), or 404. */
export async function getRequest(
  ctx: Pick<ServiceContext, "db">,
  scope: StreamScope,
  requestId: string,
): Promise<StoredRequest> {
  const found = await findRequestLogEntry(ctx.db, scope, requestId);
  if (!found) throw new ApiError("not_found", `No logged request with id ${requestId}.`);
  return found;
}

/** Rows one retention statement deletes at most: a short statement, a few hundred KB of WAL. */
export const RETENTION_BATCH = 1_000;
/** How often one process looks when the last look found nothing left to delete. */
const LOOK_EVERY_MS = 60_000;
/**
 * Transactions of a pass at most, each of one batch of each kind: 10,000 rows a second and a
 * process, past what one process writes, so a backlog shrinks while a brand floods the log.
 */
const BATCHES_PER_PASS = 10;
/** A retention statement waits this long at most for a lock on the log (another process's batch, a maintenance lock). */
const LOCK_TIMEOUT = "1s";

export interface RequestLogRetention {
  retentionDays: number;
  maxRowsPerBrand: number;
}

/**
 * The request log's retention for the lifecycle sweeper (every SWEEP_INTERVAL_MS): deletes rows
 * older than `retentionDays`, and the oldest rows of a brand and mode beyond `maxRowsPerBrand`, at
 * most RETENTION_BATCH of each per transaction, each a short one that waits at most a second for a
 * lock, and again while batches come back full, up to BATCHES_PER_PASS. It looks once a minute,
 * and at every pass while it finds full batches (a backlog). A failure (a lock held, the database
 * away) is reported and retried at the next look; it never stops the sweep.
 */
export function requestLogRetention(
  { retentionDays, maxRowsPerBrand }: RequestLogRetention,
  { onError = () => undefined, batch = RETENTION_BATCH }: { onError?(error: unknown): void; batch?: number } = {},
): (db: Database, now: Date) => Promise<number> {
  let nextLookAt = Number.NEGATIVE_INFINITY;
  return async (db, now) => {
    if (now.getTime() < nextLookAt) return 0;
    nextLookAt = now.getTime() + LOOK_EVERY_MS;
    const cutOff = lowestTimeOrderedId(now.getTime() - retentionDays * 24 * 60 * 60 * 1000);
    let deleted = 0;
    try {
      for (let round = 0; round < BATCHES_PER_PASS; round++) {
        const { aged, over } = await db.transaction(async (tx: Queryable) => {
          await tx.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
          return {
            over: await deleteOverCeiling(tx, maxRowsPerBrand, batch),
            aged: await deleteExpiredRequestLog(tx, cutOff, batch),
          };
        });
        deleted += aged + over;
        if (aged < batch && over < batch) return deleted;
      }
      // Still full batches: the next pass goes on.
      nextLookAt = Number.NEGATIVE_INFINITY;
      return deleted;
    } catch (error) {
      onError(error);
      return deleted;
    }
  };
}
