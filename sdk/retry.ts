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
   * The longest one call waits, in all, for rate-limit windows before retrying `rate_limited`:
   * when the next window opens later than what is left of it, the 429 is thrown at once
   * (`RateLimitedError`, its message saying so). Default 10 000; 60 000 waits out a whole window.
   */
  maxRateLimitWaitMs?: number | undefined;
  /**
   * Called before each wait for a retry, with what the SDK is about to wait for; for logs and
   * metrics. It runs synchronously; what it throws rejects the call.
   */
  onRetry?: ((retry: RetryEvent) => void) | undefined;
  /**
   * The client's clock in epoch ms, for the rate-limit window when a 429 carries no
   * `RateLimit-Reset` header (older servers); inject in tests.
   */
  now?: (() => number) | undefined;
}

/** Why a request is sent again. */
export type RetryReason = "rate_limited" | "db_error" | "network" | "idempotency_key_in_use";

/** What `onRetry` is told before each wait. */
export interface RetryEvent {
  /** The retry about to be made: 1 for the first (the call's second request). */
  attempt: number;
  /** How long the SDK waits before sending it, in milliseconds. */
  delayMs: number;
  /** `rate_limited` (429), `db_error` (500), `network` (no HTTP answer), `idempotency_key_in_use` (409). */
  reason: RetryReason;
  method: string;
  url: string;
  /** The failure, when `reason` is `network`. */
  error?: unknown;
}

// The server counts requests in fixed windows of one UTC minute and sends no Retry-After: a retry
// inside the same window is refused again, so `rate_limited` waits for the next window instead.
// The 429 says when that is (`RateLimit-Reset`, whole seconds); without it, the client's clock
// guesses the minute. The jitter keeps a brand's clients from all retrying at the same instant.
const RATE_LIMIT_WINDOW_MS = 60_000;
const RATE_LIMIT_JITTER_MS = 1_000;
// A call that blocks for a whole window looks hung; past this the caller decides (and is told).
const DEFAULT_MAX_RATE_LIMIT_WAIT_MS = 10_000;
const RATE_LIMIT_RESET_HEADER = "RateLimit-Reset";

// The spec calls GET and DELETE safe to retry. A POST is safe only with an Idempotency-Key: the
// server then replays the first answer instead of acting twice (a POST /streams without one may
// have created a stream). The client sends one with DELETE /streams/{id} too, so the retry of an
// end whose answer was lost gets that answer, not 404 for the stream it ended.
const RETRYABLE_METHODS = new Set(["GET", "DELETE"]);
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
/** The retry reasons that are error codes of an answer. */
type AnswerReason = Exclude<RetryReason, "network">;
// concurrency_limit is also a 429, and retrying never clears it.
const RETRYABLE_CODES: ReadonlySet<AnswerReason> = new Set<AnswerReason>(["rate_limited", "db_error"]);
// The first request with the key is still running: a retry after the backoff gets its answer.
const RETRYABLE_IDEMPOTENT_CODES: ReadonlySet<AnswerReason> = new Set<AnswerReason>([
  ...RETRYABLE_CODES,
  "idempotency_key_in_use",
]);

/** Whether `request` may be sent again: GET, DELETE, or a POST carrying an Idempotency-Key. */
function isRetryable(request: Request): boolean {
  return (
    RETRYABLE_METHODS.has(request.method) || (request.method === "POST" && request.headers.has(IDEMPOTENCY_KEY_HEADER))
  );
}

// Why a 429 was returned rather than retried, for the error the client throws from it.
const notRetried = new WeakMap<Response, string>();

/** Why `withRetry` returned this `rate_limited` answer instead of waiting for the next window, if it did. */
export function whyNotRetried(response: Response): string | undefined {
  return notRetried.get(response);
}

/**
 * Wraps `fetch` so GET, DELETE and POSTs with an `Idempotency-Key` are retried with exponential
 * backoff and jitter on 500 `db_error` and network failures, and on 429 `rate_limited` once the
 * next one-minute window has begun (`RateLimit-Reset` seconds later, within `maxRateLimitWaitMs`
 * in all); a request with a key also on 409 `idempotency_key_in_use`. Every retry sends the same
 * key, so the server acts at most once. `onRetry` hears of each wait first. A network failure
 * that outlives the retries (or hits a POST without a key) is thrown as `ApiConnectionError`; an
 * aborted request is not retried.
 */
export function withRetry(
  fetch: FetchLike,
  {
    maxRetries = 2,
    baseDelayMs = 500,
    sleep = defaultSleep,
    random = Math.random,
    maxRateLimitWaitMs = DEFAULT_MAX_RATE_LIMIT_WAIT_MS,
    onRetry,
    now = Date.now,
  }: RetryOptions = {},
): FetchLike {
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new TypeError(`retry.maxRetries must be a whole number ≥ 0 (0 disables retrying), got ${maxRetries}.`);
  }
  if (!Number.isFinite(maxRateLimitWaitMs) || maxRateLimitWaitMs < 0) {
    throw new TypeError(
      `retry.maxRateLimitWaitMs must be a finite number of milliseconds ≥ 0, got ${maxRateLimitWaitMs}.`,
    );
  }
  if (!Number.isFinite(baseDelayMs) || baseDelayMs < 0) {
    throw new TypeError(`retry.baseDelayMs must be a finite number of milliseconds ≥ 0, got ${baseDelayMs}.`);
  }
  if (onRetry !== undefined && typeof onRetry !== "function") {
    throw new TypeError(`retry.onRetry must be a function (retry) => void, got ${typeof onRetry}.`);
  }
  return async function retryingFetch(request, init) {
    const retries = isRetryable(request) ? maxRetries : 0;
    const codes = request.headers.has(IDEMPOTENCY_KEY_HEADER) ? RETRYABLE_IDEMPOTENT_CODES : RETRYABLE_CODES;
    let rateLimitWaited = 0;
    const wait = async (attempt: number, delayMs: number, reason: RetryReason, error?: unknown) => {
      const { method, url } = request;
      onRetry?.({ attempt: attempt + 1, delayMs, reason, method, url, ...(reason === "network" ? { error } : {}) });
      await sleep(delayMs);
    };
    for (let attempt = 0; ; attempt++) {
      const isLast = attempt >= retries;
      let response: Response;
      try {
        response = await fetch(isLast ? request : request.clone(), init);
      } catch (error) {
        if (request.signal.aborted) throw error;
        if (isLast)
          throw new ApiConnectionError(
            request.method,
            request.url,
            attempt + 1,
            error,
            request.headers.get(IDEMPOTENCY_KEY_HEADER) ?? undefined,
          );
        await wait(attempt, backoff(attempt, baseDelayMs, random), "network", error);
        continue;
      }
      const code = isLast ? undefined : await retryableCode(response, codes);
      if (code === undefined) return response;
      let delay = backoff(attempt, baseDelayMs, random);
      if (code === "rate_limited") {
        // The budget is compared with the server's own figure, then the jitter is added within
        // what is left of it, so the waits of one call never add up to more than the budget.
        const left = maxRateLimitWaitMs - rateLimitWaited;
        const untilNextWindow = msUntilNextWindow(response, now);
        if (untilNextWindow > left) {
          notRetried.set(response, budgetSpent(untilNextWindow, left, maxRateLimitWaitMs));
          return response;
        }
        delay = Math.min(left, Math.max(delay, untilNextWindow + Math.round(random() * RATE_LIMIT_JITTER_MS)));
        rateLimitWaited += delay;
      }
      await response.body?.cancel();
      await wait(attempt, delay, code);
    }
  };
}

function budgetSpent(untilNextWindow: number, left: number, budget: number): string {
  const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
  const of =
    left === budget
      ? `retry.maxRateLimitWaitMs (${seconds(budget)})`
      : `the ${seconds(left)} left of retry.maxRateLimitWaitMs (${seconds(budget)})`;
  return `Not retried: the next rate-limit window opens in ${seconds(untilNextWindow)}, later than ${of} allows.`;
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
async function retryableCode(response: Response, codes: ReadonlySet<AnswerReason>): Promise<AnswerReason | undefined> {
  if (response.status !== 429 && response.status !== 500 && response.status !== 409) return undefined;
  const body: unknown = await response
    .clone()
    .json()
    .catch(() => undefined);
  const code: ErrorCode | undefined = errorCodeOf(body);
  return [...codes].find((retryable) => retryable === code);
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
