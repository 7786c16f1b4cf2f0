import { afterEach, describe, expect, it, vi } from "vitest";
import { createClient } from "./client.ts";
import {
  ApiConnectionError,
  ConcurrencyLimitError,
  DatabaseError,
  InternalServerError,
  RateLimitedError,
} from "./errors.ts";
import { backoff, withRetry, type RetryEvent } from "./retry.ts";
import { apiError, json, recordingSleep, scriptedFetch, type Answer } from "./test-helpers.ts";

const BASE_URL = "https://api.example.test/api/v1";
const STREAM_ID = "6f1c1f3e-7c55-4b8e-9d86-0c5a8f0a2b11";
const LIST = { streams: [], total: 0, limit: 20, offset: 0 };
const CREATE_BODY = { creator_id: "avt_abcdefghijkl", product_name: "Sneakers", platform: "youtube" } as const;

// 59.5 s into a UTC minute: the next rate-limit window begins in 500 ms.
const HALF_SECOND_BEFORE_A_MINUTE = Date.UTC(2026, 10, 20, 12, 0, 59, 500);

function rateLimitedWithReset(seconds: string): Response {
  const body = { error: { code: "rate_limited", message: "rate_limited happened" } };
  return new Response(JSON.stringify(body), {
    status: 429,
    headers: { "Content-Type": "application/json", "RateLimit-Reset": seconds },
  });
}

function clientWith(
  answers: Answer[],
  retry: {
    maxRetries?: number;
    baseDelayMs?: number;
    maxRateLimitWaitMs?: number;
    now?: () => number;
    onRetry?: (retry: RetryEvent) => void;
  } = {},
) {
  const { fetch, requests } = scriptedFetch(...answers);
  const { sleep, delays } = recordingSleep();
  const client = createClient({
    baseUrl: BASE_URL,
    apiKey: "svc_test_x",
    fetch,
    retry: { now: () => HALF_SECOND_BEFORE_A_MINUTE, ...retry, sleep, random: () => 0 },
  });
  return { client, requests, delays };
}

describe("retry", () => {
  it("retries a GET answered 429 rate_limited, then returns the data", async () => {
    const { client, requests, delays } = clientWith([apiError(429, "rate_limited"), json(200, LIST)]);
    await expect(client.streams.list()).resolves.toEqual(LIST);
    expect(requests).toHaveLength(2);
    expect(delays).toEqual([500]);
  });

  it("waits for the next one-minute window before retrying rate_limited", async () => {
    const twentySecondsIntoAMinute = Date.UTC(2026, 10, 20, 12, 0, 20);
    const { client, delays } = clientWith([apiError(429, "rate_limited"), json(200, LIST)], {
      now: () => twentySecondsIntoAMinute,
      maxRateLimitWaitMs: 60_000,
    });
    await expect(client.streams.list()).resolves.toEqual(LIST);
    expect(delays).toEqual([40_000]);
  });

  it("waits the RateLimit-Reset seconds the 429 names rather than the client's own minute", async () => {
    const twentySecondsIntoAMinute = Date.UTC(2026, 10, 20, 12, 0, 20);
    const limited = rateLimitedWithReset("7");
    const { client, delays } = clientWith([limited, json(200, LIST)], { now: () => twentySecondsIntoAMinute });
    await expect(client.streams.list()).resolves.toEqual(LIST);
    expect(delays).toEqual([7_000]);
  });

  it("by default waits at most 10 s for rate limits: a 429 whose window opens in 46 s is thrown at once, saying why", async () => {
    const { fetch, requests } = scriptedFetch(rateLimitedWithReset("46"), json(200, LIST));
    const { sleep, delays } = recordingSleep();
    const client = createClient({ baseUrl: BASE_URL, apiKey: "svc_test_x", fetch, retry: { sleep } });
    const error = await client.streams.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as Error).message).toBe(
      "rate_limited happened (Not retried: the next rate-limit window opens in 46 s, later than retry.maxRateLimitWaitMs (10 s) allows.)",
    );
    expect(requests).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it("counts every rate-limit wait of one call against maxRateLimitWaitMs, jitter included", async () => {
    const { fetch, requests } = scriptedFetch(rateLimitedWithReset("6"), rateLimitedWithReset("6"), json(200, LIST));
    const { sleep, delays } = recordingSleep();
    const client = createClient({
      baseUrl: BASE_URL,
      apiKey: "svc_test_x",
      fetch,
      retry: { sleep, random: () => 0.5 },
    });
    const error = await client.streams.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as Error).message).toMatch(
      /opens in 6 s, later than the 3\.5 s left of retry\.maxRateLimitWaitMs \(10 s\) allows/,
    );
    expect(requests).toHaveLength(2);
    expect(delays).toEqual([6_500]);

    // A window 10 s away is waited for, and the jitter never takes the wait past the budget.
    const atTheLimit = scriptedFetch(rateLimitedWithReset("10"), json(200, LIST));
    const recorded = recordingSleep();
    const patient = createClient({
      baseUrl: BASE_URL,
      apiKey: "svc_test_x",
      fetch: atTheLimit.fetch,
      retry: { sleep: recorded.sleep, random: () => 0.99 },
    });
    await expect(patient.streams.list()).resolves.toEqual(LIST);
    expect(recorded.delays).toEqual([10_000]);
  });

  it("with maxRateLimitWaitMs: 60_000, waits a whole window when the 429 comes in its first second (RateLimit-Reset: 60)", async () => {
    const { client, requests, delays } = clientWith([rateLimitedWithReset("60"), json(200, LIST)], {
      maxRateLimitWaitMs: 60_000,
    });
    await expect(client.streams.list()).resolves.toEqual(LIST);
    expect(requests).toHaveLength(2);
    expect(delays).toEqual([60_000]);
  });

  it("returns rate_limited at once when RateLimit-Reset is further away than maxRateLimitWaitMs, and guesses the minute from a malformed one", async () => {
    const { client, requests } = clientWith([rateLimitedWithReset("30"), json(200, LIST)], {
      maxRateLimitWaitMs: 5_000,
    });
    await expect(client.streams.list()).rejects.toBeInstanceOf(RateLimitedError);
    expect(requests).toHaveLength(1);
    const guessed = clientWith([rateLimitedWithReset("soon"), json(200, LIST)]);
    await expect(guessed.client.streams.list()).resolves.toEqual(LIST);
    expect(guessed.delays).toEqual([500]);
  });

  it("returns rate_limited at once when the next window is further away than maxRateLimitWaitMs", async () => {
    const twentySecondsIntoAMinute = Date.UTC(2026, 10, 20, 12, 0, 20);
    const { client, requests, delays } = clientWith([apiError(429, "rate_limited"), json(200, LIST)], {
      now: () => twentySecondsIntoAMinute,
      maxRateLimitWaitMs: 5_000,
    });
    await expect(client.streams.list()).rejects.toBeInstanceOf(RateLimitedError);
    expect(requests).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it("retries a GET answered 500 db_error, then returns the data", async () => {
    const { client, requests } = clientWith([apiError(500, "db_error"), apiError(500, "db_error"), json(200, LIST)]);
    await expect(client.streams.list()).resolves.toEqual(LIST);
    expect(requests).toHaveLength(3);
  });

  it("retries a GET whose fetch throws a network error, then returns the data", async () => {
    const { client, requests } = clientWith([new TypeError("fetch failed"), json(200, LIST)]);
    await expect(client.streams.list()).resolves.toEqual(LIST);
    expect(requests).toHaveLength(2);
  });

  it("retries a DELETE answered 429 rate_limited", async () => {
    const ended = { stream_id: STREAM_ID, status: "ended", ended_at: "2026-09-21T10:00:00.000Z" };
    const { client, requests } = clientWith([apiError(429, "rate_limited"), json(200, ended)]);
    await expect(client.streams.end(STREAM_ID)).resolves.toEqual(ended);
    expect(requests.map((r) => r.method)).toEqual(["DELETE", "DELETE"]);
  });

  it("ends a stream with an Idempotency-Key, the same on every retry, and the one given when there is one", async () => {
    const ended = { stream_id: STREAM_ID, status: "ended", ended_at: "2026-09-21T10:00:00.000Z" };
    const { client, requests } = clientWith([
      new TypeError("fetch failed"),
      apiError(409, "idempotency_key_in_use"),
      json(200, ended),
    ]);
    await expect(client.streams.end(STREAM_ID)).resolves.toEqual(ended);
    const keys = requests.map((request) => request.headers.get("Idempotency-Key"));
    expect(keys).toHaveLength(3);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(keys).size).toBe(1);
    await client.streams.end(STREAM_ID, { idempotencyKey: "end-order-1234" });
    expect(requests.at(-1)!.headers.get("Idempotency-Key")).toBe("end-order-1234");
    await expect(client.streams.end(STREAM_ID, { idempotencyKey: "has space" })).rejects.toThrow(
      /streams\.end: idempotencyKey must be/,
    );
  });

  it("never retries 429 concurrency_limit", async () => {
    const { client, requests } = clientWith([apiError(429, "concurrency_limit"), json(200, LIST)]);
    await expect(client.streams.list()).rejects.toBeInstanceOf(ConcurrencyLimitError);
    expect(requests).toHaveLength(1);
  });

  it("sends a fresh Idempotency-Key with each POST, and the one given when there is one", async () => {
    const { client, requests } = clientWith([json(201, {})]);
    await client.streams.create(CREATE_BODY);
    await client.streams.create(CREATE_BODY);
    await client.webhooks.create(
      { url: "https://hooks.example.com/x", events: ["stream.started"] },
      { idempotencyKey: "order-1234" },
    );
    const keys = requests.map((request) => request.headers.get("Idempotency-Key"));
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keys[1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).not.toBe(keys[0]);
    expect(keys[2]).toBe("order-1234");
  });

  it("retries a POST answered db_error, rate_limited or idempotency_key_in_use, with the same key and body each time", async () => {
    const created = { stream_id: STREAM_ID };
    const { client, requests, delays } = clientWith(
      [
        apiError(500, "db_error"),
        apiError(409, "idempotency_key_in_use"),
        apiError(429, "rate_limited"),
        json(201, created),
      ],
      { maxRetries: 3 },
    );
    await expect(client.streams.create(CREATE_BODY)).resolves.toEqual(created);
    expect(requests.map((request) => request.method)).toEqual(["POST", "POST", "POST", "POST"]);
    expect(new Set(requests.map((request) => request.headers.get("Idempotency-Key"))).size).toBe(1);
    expect(await Promise.all(requests.map((request) => request.text()))).toEqual(
      Array(4).fill(JSON.stringify(CREATE_BODY)),
    );
    expect(delays).toEqual([500, 1000, 2000]);
  });

  it("retries a POST whose fetch throws, with the same key, then returns the data", async () => {
    const { client, requests } = clientWith([new TypeError("fetch failed"), json(201, { stream_id: STREAM_ID })]);
    await expect(client.streams.create(CREATE_BODY)).resolves.toEqual({ stream_id: STREAM_ID });
    expect(requests).toHaveLength(2);
    expect(requests[1]!.headers.get("Idempotency-Key")).toBe(requests[0]!.headers.get("Idempotency-Key"));
  });

  it("after the last retry of a POST, names its Idempotency-Key so the caller can retry later without acting twice", async () => {
    const { client, requests } = clientWith([new TypeError("fetch failed")]);
    const error = await client.streams.create(CREATE_BODY, { idempotencyKey: "start-42" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiConnectionError);
    expect(error).toMatchObject({ method: "POST", attempts: 3, idempotencyKey: "start-42" });
    expect((error as Error).message).toMatch(/retry with the same idempotencyKey \(start-42\)/);
    expect(requests).toHaveLength(3);
  });

  it("never retries a POST answered 422 idempotency_key_reused or concurrency_limit", async () => {
    for (const answer of [apiError(422, "idempotency_key_reused"), apiError(429, "concurrency_limit")]) {
      const { client, requests } = clientWith([answer, json(201, {})]);
      await expect(client.streams.create(CREATE_BODY)).rejects.toMatchObject({ status: answer.status });
      expect(requests).toHaveLength(1);
    }
  });

  it("never retries a POST without an Idempotency-Key (the raw client), and says the request may have arrived", async () => {
    for (const answer of [apiError(500, "db_error"), new TypeError("fetch failed")]) {
      const { client, requests } = clientWith([answer, json(201, {})]);
      const result = await client.raw.POST("/streams", { body: CREATE_BODY }).catch((e: unknown) => e);
      if (answer instanceof Error) {
        expect(result).toBeInstanceOf(ApiConnectionError);
        expect((result as Error).message).toMatch(/may have reached the server: list before retrying/);
      } else {
        expect((result as { response: Response }).response.status).toBe(500);
      }
      expect(requests).toHaveLength(1);
    }
  });

  it("refuses an idempotencyKey the server would refuse, saying what to pass", async () => {
    const { client, requests } = clientWith([json(201, {})]);
    for (const idempotencyKey of ["", "has space", "x".repeat(256), "clé"]) {
      await expect(client.streams.create(CREATE_BODY, { idempotencyKey })).rejects.toThrow(
        /idempotencyKey must be 1 to 255 visible ASCII characters/,
      );
    }
    expect(requests).toHaveLength(0);
  });

  it("gives up after maxRetries and throws the last ApiError", async () => {
    const { client, requests, delays } = clientWith([apiError(429, "rate_limited", "slow down")], { maxRetries: 3 });
    const error = await client.streams.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).toMatchObject({ status: 429, code: "rate_limited", message: "slow down" });
    expect(requests).toHaveLength(4);
    expect(delays).toEqual([500, 1000, 2000]);
  });

  it("gives up after maxRetries on db_error with a DatabaseError", async () => {
    const { client, requests } = clientWith([apiError(500, "db_error")]);
    await expect(client.analytics.get()).rejects.toBeInstanceOf(DatabaseError);
    expect(requests).toHaveLength(3);
  });

  it("gives up after maxRetries on network errors with an ApiConnectionError naming the cause", async () => {
    const failure = new TypeError("fetch failed", {
      cause: Object.assign(new Error("connect"), { code: "ECONNREFUSED" }),
    });
    const { client, requests } = clientWith([failure]);
    const error = await client.streams.get(STREAM_ID).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiConnectionError);
    expect(error).toMatchObject({ method: "GET", attempts: 3, cause: failure });
    expect((error as Error).message).toMatch(/ECONNREFUSED/);
    expect(requests).toHaveLength(3);
  });

  it("does not retry other statuses, nor a 500 that is not db_error (internal_error included)", async () => {
    for (const answer of [
      apiError(404, "not_found"),
      apiError(401, "unauthorized"),
      apiError(500, "internal_error"),
      json(500, "<html>oops</html>"),
    ]) {
      const { client, requests } = clientWith([answer, json(200, LIST)]);
      await expect(client.streams.list()).rejects.toMatchObject({ status: answer.status });
      expect(requests).toHaveLength(1);
    }
    const { client } = clientWith([apiError(500, "internal_error")]);
    await expect(client.streams.list()).rejects.toBeInstanceOf(InternalServerError);
  });

  it("does not retry when maxRetries is 0", async () => {
    const { client, requests } = clientWith([apiError(429, "rate_limited"), json(200, LIST)], { maxRetries: 0 });
    await expect(client.streams.list()).rejects.toBeInstanceOf(RateLimitedError);
    expect(requests).toHaveLength(1);
  });

  it("does not retry a request the caller aborted", async () => {
    const controller = new AbortController();
    const { client, requests } = clientWith([
      () => {
        controller.abort();
        throw new DOMException("aborted", "AbortError");
      },
      json(200, LIST),
    ]);
    await expect(client.streams.list({}, { signal: controller.signal })).rejects.toMatchObject({ name: "AbortError" });
    expect(requests).toHaveLength(1);
  });

  it("sends the same request on every attempt", async () => {
    const { client, requests } = clientWith([apiError(429, "rate_limited"), json(200, LIST)]);
    await client.streams.list({ status: "live", limit: 5 }, { headers: { "X-Trace": "1" } });
    const [first, second] = requests;
    expect(second?.url).toBe(first?.url);
    expect(second?.headers.get("Authorization")).toBe("Bearer svc_test_x");
    expect(second?.headers.get("X-Trace")).toBe("1");
  });

  it("rejects invalid options with a message that says what to pass", () => {
    const fetch = async () => json(200, {});
    expect(() => withRetry(fetch, { maxRetries: -1 })).toThrow(/maxRetries must be a whole number/);
    expect(() => withRetry(fetch, { baseDelayMs: Number.NaN })).toThrow(/baseDelayMs must be a finite number/);
    expect(() => withRetry(fetch, { maxRateLimitWaitMs: -1 })).toThrow(/maxRateLimitWaitMs must be a finite number/);
    expect(() => withRetry(fetch, { onRetry: "log" as unknown as () => void })).toThrow(
      /onRetry must be a function \(retry\) => void, got string/,
    );
  });
});

describe("onRetry", () => {
  it("hears of each wait before it starts: the retry's number, the delay and the reason", async () => {
    const events: Array<RetryEvent | { slept: number }> = [];
    const failure = new TypeError("fetch failed");
    const { fetch } = scriptedFetch(apiError(500, "db_error"), failure, rateLimitedWithReset("3"), json(200, LIST));
    const client = createClient({
      baseUrl: BASE_URL,
      apiKey: "svc_test_x",
      fetch,
      retry: {
        maxRetries: 3,
        random: () => 0,
        onRetry: (event) => events.push(event),
        sleep: async (ms) => void events.push({ slept: ms }),
      },
    });
    await expect(client.streams.list({ limit: 5 })).resolves.toEqual(LIST);
    const url = `${BASE_URL}/streams?limit=5`;
    expect(events).toEqual([
      { attempt: 1, delayMs: 500, reason: "db_error", method: "GET", url },
      { slept: 500 },
      { attempt: 2, delayMs: 1_000, reason: "network", method: "GET", url, error: failure },
      { slept: 1_000 },
      { attempt: 3, delayMs: 3_000, reason: "rate_limited", method: "GET", url },
      { slept: 3_000 },
    ]);
  });

  it("is told of a POST or DELETE waiting for its key's first request (idempotency_key_in_use), and of nothing when no retry follows", async () => {
    const onRetry = vi.fn();
    const ended = { stream_id: STREAM_ID, status: "ended", ended_at: "2026-09-21T10:00:00.000Z" };
    const { client } = clientWith([apiError(409, "idempotency_key_in_use"), json(200, ended)], { onRetry });
    await client.streams.end(STREAM_ID);
    expect(onRetry.mock.calls).toEqual([
      [
        {
          attempt: 1,
          delayMs: 500,
          reason: "idempotency_key_in_use",
          method: "DELETE",
          url: `${BASE_URL}/streams/${STREAM_ID}`,
        },
      ],
    ]);

    const quiet = vi.fn();
    const refused = clientWith([rateLimitedWithReset("40"), apiError(429, "concurrency_limit")], { onRetry: quiet });
    await expect(refused.client.streams.list()).rejects.toBeInstanceOf(RateLimitedError);
    await expect(refused.client.streams.create(CREATE_BODY)).rejects.toBeInstanceOf(ConcurrencyLimitError);
    expect(quiet).not.toHaveBeenCalled();
  });
});

describe("the default waits, on the clock", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a call answered 429 again and again gives up within 10 s of waiting, and says so", async () => {
    vi.useFakeTimers();
    const { fetch, requests } = scriptedFetch(rateLimitedWithReset("4"));
    const client = createClient({ baseUrl: BASE_URL, apiKey: "svc_test_x", fetch, retry: { maxRetries: 5 } });
    const started = Date.now();
    const outcome = client.streams.list().catch((error: unknown) => ({ error, after: Date.now() - started }));
    await vi.advanceTimersByTimeAsync(60_000);
    const { error, after } = (await outcome) as { error: Error; after: number };
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.message).toMatch(/Not retried: the next rate-limit window opens in 4 s/);
    // Two waits of 4 s and up to 1 s of jitter each fit in 10 s; a third does not.
    expect(requests).toHaveLength(3);
    expect(after).toBeGreaterThanOrEqual(8_000);
    expect(after).toBeLessThanOrEqual(10_000);
  });
});

describe("backoff", () => {
  it("doubles per attempt and takes off at most half as jitter", () => {
    expect([0, 1, 2].map((n) => backoff(n, 500, () => 0))).toEqual([500, 1000, 2000]);
    expect([0, 1, 2].map((n) => backoff(n, 500, () => 0.999999))).toEqual([250, 500, 1000]);
  });
});
