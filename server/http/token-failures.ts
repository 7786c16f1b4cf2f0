import type { Request } from "express";
import { addressBucket } from "../domain/ip-address.ts";
import { bearerTokenMatches } from "../domain/keys.ts";
import { ApiError } from "../domain/errors.ts";
import type { Clock } from "../services/context.ts";

const BASE_WAIT_MS = 1000;
const MAX_WAIT_MS = 15 * 60_000;
/** Addresses remembered per process; the oldest is forgotten first. */
const MAX_TRACKED = 10_000;

/**
 * The operator's and the metrics scraper's bearer tokens (ADMIN_TOKEN, METRICS_TOKEN), checked
 * with guessing slowed per client address (an IPv6 client by its /64): after 5 failures each
 * further attempt must wait (1 s, doubling up to 15 minutes), and one sent sooner is 429
 * `rate_limited` without being compared.
 * Counted in the process's memory: these endpoints answer while the database is down.
 */
export function tokenChecker({
  clock,
  addressOf,
  freeFailures = 5,
}: {
  clock: Clock;
  addressOf: (req: Request) => string;
  /** Failed checks allowed per address before waits begin (TOKEN_FAILURES_BEFORE_WAIT). */
  freeFailures?: number;
}) {
  const failures = new Map<string, { count: number; nextAt: number }>();
  return function checkToken(req: Request, secret: string, refusal: string): void {
    const address = addressBucket(addressOf(req));
    const now = clock().getTime();
    const seen = failures.get(address);
    if (seen && seen.nextAt > now) {
      const seconds = Math.ceil((seen.nextAt - now) / 1000);
      throw new ApiError("rate_limited", `Too many failed token checks from your address. Try again in ${seconds} s.`);
    }
    if (bearerTokenMatches(req.headers.authorization, secret)) {
      failures.delete(address);
      return;
    }
    const count = (seen?.count ?? 0) + 1;
    const waitMs = count < freeFailures ? 0 : Math.min(BASE_WAIT_MS * 2 ** (count - freeFailures), MAX_WAIT_MS);
    failures.delete(address);
    failures.set(address, { count, nextAt: now + waitMs });
    if (failures.size > MAX_TRACKED) {
      const oldest = failures.keys().next();
      if (!oldest.done) failures.delete(oldest.value);
    }
    throw new ApiError("unauthorized", refusal);
  };
}

export type TokenChecker = ReturnType<typeof tokenChecker>;
