import type { Response } from "express";
import { secondsUntilNextWindow } from "../domain/rate-window.ts";
import { ApiError } from "../domain/errors.ts";

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

/**
 * The one rule of every counted window (the public API's per brand, the dashboard's per session
 * and per address): the answer carries the window's `RateLimit-*` headers, and a request counted
 * past the limit is `429 rate_limited` (with `message`, or the public API's own).
 */
export function enforceWindow(res: Response, limit: number, count: number, now: Date, message?: string): void {
  setRateLimitHeaders(res, limit, count, now);
  if (count > limit) throw new ApiError("rate_limited", message);
}
