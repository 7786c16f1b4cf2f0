import { ApiConnectionError, errorCodeOf, type ErrorCode } from "./errors.ts";

/** The fetch signature openapi-fetch calls: one `Request`, plus its optional RequestInit extension. */
export type FetchLike = (input: Request, init?: RequestInit) => Promise<Response>;

export interface RetryOptions {
  /** Retries after the first attempt; 0 disables retrying. Default 2. */
  maxRetries?: number | undefined;
  /** Delay before the first retry; each next retry doubles it, minus up to half as jitter. Default 500. */
  baseDelayMs?: number | undefined;
  /** How to wait; inject a no-op in tests. */
  sleep?: ((ms: number) => Promise<void>) | undefined;
  /** Source of jitter in [0, 1). */
  random?: (() => number) | undefined;
  /**
   * The longest wait for the next rate-limit window before retrying `rate_limited`; when the
   * window is further away, the 429 is returned at once. Default 60 000 (always wait).
   */
  maxRateLimitWaitMs?: number | undefined;
  /**
   * The client's clock in epoch ms, for the rate-limit window when a 429 carries no
   * `RateLimit-Reset` header (older servers); inject in tests.
   */
  now?: (() => number) | undefined;
}

// The server counts requests in fixed windows of one UTC minute and sends no Retry-After: a retry
// inside the same window is refused again, so `rate_limited` waits for the next window instead.
// The 429 says when that is (`RateLimit-Reset`, whole seconds); without it, the client's clock
// guesses the minute. The jitter keeps a brand's clients from all retrying at the same instant.
const RATE_LIMIT_WINDOW_MS = 60_000;
const RATE_LIMIT_JITTER_MS = 1_000;
const RATE_LIMIT_RESET_HEADER = "RateLimit-Reset";

// The spec calls GET and DELETE safe to retry. A POST is safe only with an Idempotency-Key: the
// server then replays the first answer instead of acting twice (a POST /streams without one may
// have created a stream).
const RETRYABLE_METHODS = new Set(["GET", "DELETE"]);
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
// concurrency_limit is also a 429, and retrying never clears it.
const RETRYABLE_CODES = new Set<ErrorCode>(["rate_limited", "db_error"]);
// The first request with the key is still running: a retry after the backoff gets its answer.
const RETRYABLE_IDEMPOTENT_CODES = new Set<ErrorCode>([...RETRYABLE_CODES, "idempotency_key_in_use"]);

/** Whether `request` may be sent again: GET, DELETE, or a POST carrying an Idempotency-Key. */
function isRetryable(request: Request): boolean {
  return RETRYABLE_METHODS.has(request.method) || (request.method === "POST" && request.headers.has(IDEMPOTENCY_KEY_HEADER));
}

/**
 * Wraps `fetch` so GET, DELETE and POSTs with an `Idempotency-Key` are retried with exponential
 * backoff and jitter on 500 `db_error` and network failures, and on 429 `rate_limited` once the
 * next one-minute window has begun (`RateLimit-Reset` seconds later); a POST also on 409
 * `idempotency_key_in_use`. Every retry sends the same key, so the server acts at most once. A
 * network failure that outlives the retries (or hits a POST without a key) is thrown as
 * `ApiConnectionError`; an aborted request is not retried.
 */
export function withRetry(
  fetch: FetchLike,
  {
    maxRetries = 2,
    baseDelayMs = 500,
    sleep = defaultSleep,
    random = Math.random,
    maxRateLimitWaitMs = RATE_LIMIT_WINDOW_MS,
    now = Date.now,
  }: RetryOptions = {},
): FetchLike {
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new TypeError(`retry.maxRetries must be a whole number ≥ 0 (0 disables retrying), got ${maxRetries}.`);
  }
  if (!Number.isFinite(maxRateLimitWaitMs) || maxRateLimitWaitMs < 0) {
    throw new TypeError(`retry.maxRateLimitWaitMs must be a finite number of milliseconds ≥ 0, got ${maxRateLimitWaitMs}.`);
  }
  if (!Number.isFinite(baseDelayMs) || baseDelayMs < 0) {
    throw new TypeError(`retry.baseDelayMs must be a finite number of milliseconds ≥ 0, got ${baseDelayMs}.`);
  }
  return async function retryingFetch(request, init) {
    const retries = isRetryable(request) ? maxRetries : 0;
    const codes = request.method === "POST" ? RETRYABLE_IDEMPOTENT_CODES : RETRYABLE_CODES;
    for (let attempt = 0; ; attempt++) {
      const isLast = attempt >= retries;
      let response: Response;
      try {
        response = await fetch(isLast ? request : request.clone(), init);
      } catch (error) {
        if (request.signal.aborted) throw error;
        if (isLast) throw new ApiConnectionError(request.method, request.url, attempt + 1, error, request.headers.get(IDEMPOTENCY_KEY_HEADER) ?? undefined);
        await sleep(backoff(attempt, baseDelayMs, random));
        continue;
      }
      const code = isLast ? undefined : await retryableCode(response, codes);
      if (code === undefined) return response;
      let delay = backoff(attempt, baseDelayMs, random);
      if (code === "rate_limited") {
        // The cap is compared with the server's own figure: jitter on top of a full 60 s wait must
        // not turn the default (always wait for the next window) into no retry at all.
        const untilNextWindow = msUntilNextWindow(response, now);
        if (untilNextWindow > maxRateLimitWaitMs) return response;
        delay = Math.max(delay, untilNextWindow + Math.round(random() * RATE_LIMIT_JITTER_MS));
      }
      await response.body?.cancel();
      await sleep(delay);
    }
  };
}

/**
 * Until the server's next rate-limit window: its `RateLimit-Reset` seconds when the 429 carries a
 * whole number there, else the rest of the client's current UTC minute.
 */
function msUntilNextWindow(response: Response, now: () => number): number {
  const reset = response.headers.get(RATE_LIMIT_RESET_HEADER)?.trim();
  if (reset !== undefined && /^\d{1,5}$/.test(reset)) return Number(reset) * 1000;
  return RATE_LIMIT_WINDOW_MS - (now() % RATE_LIMIT_WINDOW_MS);
}

/** Delay before retry number `attempt + 1`: base × 2^attempt, reduced by up to half at random. */
export function backoff(attempt: number, baseDelayMs: number, random: () => number = Math.random): number {
  const ceiling = baseDelayMs * 2 ** attempt;
  return Math.round(ceiling * (1 - random() / 2));
}

/** The error code when the response is one worth retrying, else undefined. */
async function retryableCode(response: Response, codes: ReadonlySet<ErrorCode>): Promise<ErrorCode | undefined> {
  if (response.status !== 429 && response.status !== 500 && response.status !== 409) return undefined;
  const body: unknown = await response
    .clone()
    .json()
    .catch(() => undefined);
  const code = errorCodeOf(body);
  return code !== undefined && codes.has(code) ? code : undefined;
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
