import { ApiConnectionError, errorCodeOf, type ErrorCode } from "./errors.ts";

/** The fetch signature openapi-fetch calls: one `Request`, plus its optional RequestInit extension. */
export type FetchLike = (input: Request, init?: RequestInit) => Promise<Response>;

export interface RetryOptions {
  /** Retries after the first attempt; 0 disables retrying. Default 2. */
  maxRetries?: number;
  /** Delay before the first retry; each next retry doubles it, minus up to half as jitter. Default 500. */
  baseDelayMs?: number;
  /** How to wait; inject a no-op in tests. */
  sleep?: (ms: number) => Promise<void>;
  /** Source of jitter in [0, 1). */
  random?: () => number;
}

// The spec calls GET and DELETE safe to retry; a POST /streams may have created a stream.
const RETRYABLE_METHODS = new Set(["GET", "DELETE"]);
// concurrency_limit is also a 429, and retrying never clears it.
const RETRYABLE_CODES = new Set<ErrorCode>(["rate_limited", "db_error"]);

/**
 * Wraps `fetch` so GET and DELETE are retried with exponential backoff and jitter on
 * 429 `rate_limited`, 500 `db_error` and network failures. A network failure that outlives the
 * retries (or hits a POST) is thrown as `ApiConnectionError`; an aborted request is not retried.
 */
export function withRetry(
  fetch: FetchLike,
  { maxRetries = 2, baseDelayMs = 500, sleep = defaultSleep, random = Math.random }: RetryOptions = {},
): FetchLike {
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new TypeError(`retry.maxRetries must be a whole number ≥ 0 (0 disables retrying), got ${maxRetries}.`);
  }
  if (!Number.isFinite(baseDelayMs) || baseDelayMs < 0) {
    throw new TypeError(`retry.baseDelayMs must be a finite number of milliseconds ≥ 0, got ${baseDelayMs}.`);
  }
  return async function retryingFetch(request, init) {
    const retries = RETRYABLE_METHODS.has(request.method) ? maxRetries : 0;
    for (let attempt = 0; ; attempt++) {
      const isLast = attempt >= retries;
      let response: Response;
      try {
        response = await fetch(isLast ? request : request.clone(), init);
      } catch (error) {
        if (request.signal.aborted) throw error;
        if (isLast) throw new ApiConnectionError(request.method, request.url, attempt + 1, error);
        await sleep(backoff(attempt, baseDelayMs, random));
        continue;
      }
      if (isLast || !(await isRetryable(response))) return response;
      await response.body?.cancel();
      await sleep(backoff(attempt, baseDelayMs, random));
    }
  };
}

/** Delay before retry number `attempt + 1`: base × 2^attempt, reduced by up to half at random. */
export function backoff(attempt: number, baseDelayMs: number, random: () => number = Math.random): number {
  const ceiling = baseDelayMs * 2 ** attempt;
  return Math.round(ceiling * (1 - random() / 2));
}

async function isRetryable(response: Response): Promise<boolean> {
  if (response.status !== 429 && response.status !== 500) return false;
  const body: unknown = await response
    .clone()
    .json()
    .catch(() => undefined);
  const code = errorCodeOf(body);
  return code !== undefined && RETRYABLE_CODES.has(code);
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
