/**
 * `live-stream-hosting logs tail [--status 4xx] [--method POST] [--path /streams]`: follows the
 * key's mode's request log (GET /requests, scope `logs:read`) as requests happen, one line each:
 * time, status, method, path and query, request id, error code. It polls once a second (entries
 * are written about half a second after their answer, so a request shows within two), asks only
 * for what came since the last poll (with a few seconds of overlap, so an entry written late is
 * not missed, and none is printed twice), and leaves out its own polls, which it names by their
 * `X-Request-Id`. Its polls count against the brand's rate limit like any request: it slows down
 * when `RateLimit-Remaining` runs low, and waits out a 429, so it never takes a minute's last
 * requests. Runs until Ctrl-C.
 */
import { randomBytes } from "node:crypto";
import type { LiveStreamClient, RequestLogEntry, RequestsQuery } from "./client.ts";
import { errorFromBody, RateLimitedError } from "./errors.ts";

export interface LogsFilters {
  status?: string | undefined;
  method?: string | undefined;
  path?: string | undefined;
}

export interface LogsIo {
  out(line: string): void;
  err(line: string): void;
  sleep(ms: number): Promise<void>;
  /** Aborted to stop. */
  signal?: AbortSignal | undefined;
}

/** Between polls, with room in the brand's window. */
export const POLL_MS = 1_000;
/** How far back each poll reaches before the newest entry seen: entries written late are still found. */
const OVERLAP_MS = 5_000;
/** Pages one poll reads at most (100 entries each) when many requests came at once. */
const PAGES_PER_POLL = 5;

/** `--status`: a code (`429`) or a class (`4xx`), as GET /requests takes it. */
export function statusFilterValid(status: string): boolean {
  return /^([1-5][0-9][0-9]|[1-5]xx)$/.test(status);
}

/** One line of the tail: time, status, method, path?query, request id, error code. */
export function logLine(entry: RequestLogEntry): string {
  const target = entry.query === null ? entry.path : `${entry.path}?${entry.query}`;
  const code = entry.error_code === null ? "" : `  ${entry.error_code}`;
  return `${entry.created_at}  ${entry.status}  ${entry.method.padEnd(6)} ${target}  ${entry.request_id}${code}`;
}

/** How long to wait before the next poll, from the brand's window as the last answer left it. */
function pauseAfter(headers: Headers): number {
  const limit = Number(headers.get("ratelimit-limit"));
  const remaining = Number(headers.get("ratelimit-remaining"));
  const reset = Number(headers.get("ratelimit-reset"));
  if (!(limit > 0) || !Number.isFinite(remaining)) return POLL_MS;
  // The last fifth of a window is left to the integration; half gone, polls slow to every 2 s.
  if (remaining <= limit / 5) return Math.max(POLL_MS, (Number.isFinite(reset) ? reset : 60) * 1000);
  if (remaining <= limit / 2) return 2 * POLL_MS;
  return POLL_MS;
}

export async function tailLogs(client: LiveStreamClient, filters: LogsFilters, io: LogsIo): Promise<void> {
  // The tail's own polls are logged too: they are named so that it can leave them out.
  const own = `lsh-tail-${randomBytes(6).toString("hex")}-`;
  let polls = 0;
  const seen = new Map<string, number>();
  let newest = Number.NEGATIVE_INFINITY;
  let reported = false;

  const page = async (query: RequestsQuery) => {
    const { data, error, response } = await client.raw.GET("/requests", {
      params: { query },
      headers: { "X-Request-Id": `${own}${++polls}` },
      ...(io.signal ? { signal: io.signal } : {}),
    });
    if (!response.ok) throw errorFromBody(response.status, error, response);
    return { list: data!, headers: response.headers };
  };
  const filtersQuery: RequestsQuery = {
    ...(filters.status ? { status: filters.status } : {}),
    ...(filters.method ? { method: filters.method as RequestsQuery["method"] } : {}),
    ...(filters.path ? { path: filters.path } : {}),
  };
  /** The entries new since the last poll, oldest first; the answer's headers. */
  const poll = async (): Promise<{ fresh: RequestLogEntry[]; headers: Headers }> => {
    const since = Number.isFinite(newest) ? { since: new Date(newest - OVERLAP_MS).toISOString() } : {};
    const fresh: RequestLogEntry[] = [];
    let after: string | undefined;
    let headers = new Headers();
    for (let pages = 0; pages < PAGES_PER_POLL; pages++) {
      const answer = await page({ ...filtersQuery, ...since, limit: 100, ...(after ? { starting_after: after } : {}) });
      headers = answer.headers;
      const { requests, has_more: more } = answer.list;
      fresh.push(...requests.filter((entry) => !seen.has(entry.id)));
      if (!more || requests.length === 0 || requests.some((entry) => seen.has(entry.id))) break;
      after = requests.at(-1)!.id;
    }
    return { fresh: fresh.reverse(), headers };
  };
  const remember = (entries: readonly RequestLogEntry[]) => {
    for (const entry of entries) {
      const at = Date.parse(entry.created_at);
      seen.set(entry.id, at);
      if (at > newest) newest = at;
    }
    // What is older than the overlap is never asked for again.
    for (const [id, at] of seen) if (at < newest - 2 * OVERLAP_MS) seen.delete(id);
  };

  const described = Object.entries(filters)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name} ${value}`)
    .join(", ");
  // What is already there is only remembered: the tail shows what happens from now on.
  remember((await poll()).fresh);
  io.out(
    `Following the request log${described ? ` (${described})` : ""}: one line per request as it happens. Ctrl-C to stop.`,
  );
  let pause = POLL_MS;
  while (!io.signal?.aborted) {
    await io.sleep(pause);
    if (io.signal?.aborted) return;
    try {
      const { fresh, headers } = await poll();
      remember(fresh);
      for (const entry of fresh) if (!entry.request_id.startsWith(own)) io.out(logLine(entry));
      pause = pauseAfter(headers);
      reported = false;
    } catch (error) {
      if (io.signal?.aborted) return;
      if (error instanceof RateLimitedError) {
        const reset = Number(error.headers.get("ratelimit-reset"));
        pause = Math.max(POLL_MS, (Number.isFinite(reset) ? reset : 60) * 1000);
        continue;
      }
      // A server that went away (a restart) is waited for, said once; anything the API refuses is final.
      if ((error as { status?: number }).status !== undefined && (error as { status: number }).status < 500)
        throw error;
      if (!reported) io.err(`Could not read the request log (${(error as Error).message}); trying again.`);
      reported = true;
      pause = 2 * POLL_MS;
    }
  }
}
