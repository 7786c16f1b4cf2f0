import type { Response } from "express";
import { ApiError } from "../errors.ts";

/** Requests are counted in fixed windows of one UTC minute. */
export const RATE_LIMIT_WINDOW_MS = 60_000;

/** The start of the window `now` falls in. */
export function windowStartOf(now: Date): Date {
  return new Date(Math.floor(now.getTime() / RATE_LIMIT_WINDOW_MS) * RATE_LIMIT_WINDOW_MS);
}

/**
 * Per-key fixed one-minute windows held in memory, as the spec states (counters reset when the
 * service restarts). Windows of past minutes are dropped when a new minute begins. On PostgreSQL
 * brands are counted in the database instead (services/auth.ts), so that every process of a
 * deployment shares a brand's limit; this counter then holds only `GET /` without a key.
 */
export class FixedWindowRateLimiter {
  #window = -1;
  #counts = new Map<string, number>();

  /** The key's count in the current window, without counting. */
  peek(key: string, now: Date): number {
    return Math.floor(now.getTime() / RATE_LIMIT_WINDOW_MS) === this.#window ? (this.#counts.get(key) ?? 0) : 0;
  }

  /** Counts one request; returns the key's count in the current window, this request included. */
  hit(key: string, now: Date): number {
    const window = Math.floor(now.getTime() / RATE_LIMIT_WINDOW_MS);
    if (window !== this.#window) {
      this.#window = window;
      this.#counts.clear();
    }
    const count = (this.#counts.get(key) ?? 0) + 1;
    this.#counts.set(key, count);
    return count;
  }
}

/**
 * `RateLimit-Limit`, `RateLimit-Remaining` (never negative) and `RateLimit-Reset` (whole seconds
 * until the window ends, 1 to 60) for a request counted `count`-th in its window. Set before any
 * check can fail, so the 429 and every later error carry them too; never a `Retry-After`.
 */
export function setRateLimitHeaders(res: Response, limit: number, count: number, now: Date): void {
  res.setHeader("RateLimit-Limit", String(limit));
  res.setHeader("RateLimit-Remaining", String(Math.max(0, limit - count)));
  res.setHeader("RateLimit-Reset", String(secondsUntilNextWindow(now)));
}

/** Whole seconds until the window `now` falls in ends (1 to 60). */
export function secondsUntilNextWindow(now: Date): number {
  return Math.ceil((windowStartOf(now).getTime() + RATE_LIMIT_WINDOW_MS - now.getTime()) / 1000);
}

/**
 * The one rule of every counted window (the public API's per brand, the dashboard's per session
 * and per address): the answer carries the window's `RateLimit-*` headers, and a request counted
 * past the limit is `429 rate_limited` (with `message`, or the public API's own).
 */
export function enforceWindow(res: Response, limit: number, count: number, now: Date, message?: string): void {
  setRateLimitHeaders(res, limit, count, now);
  if (count > limit) throw new ApiError("rate_limited", message);
}
