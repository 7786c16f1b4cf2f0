import type { Response } from "express";
import { addressBucket } from "../domain/ip-address.ts";
import { sha256Hex } from "../domain/secrets.ts";
import type { Queryable } from "../store/database.ts";
import { countSessionRequest } from "../store/dashboard-sessions.ts";
import { enforceWindow, type FixedWindowRateLimiter, secondsUntilNextWindow, windowStartOf } from "./rate-limiter.ts";

/** The dashboard API's request limits per one-minute window (docs/dashboard.md). */
export interface DashboardRateLimits {
  /** Requests of one signed-in session: far above what a person clicking around sends. */
  perSession: number;
  /** Requests without a live session (sign-in, invitations), per client address (an IPv6 client by its /64). */
  perAddress: number;
}

export const DEFAULT_DASHBOARD_RATE_LIMITS: DashboardRateLimits = { perSession: 300, perAddress: 100 };

export interface DashboardLimitDeps {
  db: Queryable;
  /** The process's windows: every address, and sessions when `sessionWindows` is "memory". */
  limiter: FixedWindowRateLimiter;
  /**
   * Where sessions' windows are counted: "database" on PostgreSQL, so that a session (or a stolen
   * cookie) sent to several processes meets one limit; "memory" on the embedded database, which
   * belongs to one process.
   */
  sessionWindows: "database" | "memory";
  limits: DashboardRateLimits;
}

/** Who a dashboard request is counted for: its live session, or without one its client address. */
export type DashboardSubject = { sessionId: string } | { address: string };

/**
 * Counts a dashboard request in its subject's window and refuses it past the limit (`429
 * rate_limited`), with the window's `RateLimit-*` headers on the answer either way. Addresses are
 * always counted in memory: requests without a session must not make the server write to the
 * database.
 */
export function dashboardLimiter({ db, limiter, sessionWindows, limits }: DashboardLimitDeps) {
  return async function limitDashboard(res: Response, subject: DashboardSubject, now: Date): Promise<void> {
    if ("address" in subject) {
      const count = limiter.hit(`dashboard-address:${addressBucket(subject.address)}`, now);
      return enforceWindow(
        res,
        limits.perAddress,
        count,
        now,
        `Too many requests from your address without a session: at most ${limits.perAddress} a minute. Try again in ${secondsUntilNextWindow(now)} s.`,
      );
    }
    const idHash = sha256Hex(subject.sessionId);
    const count =
      sessionWindows === "database"
        ? await countSessionRequest(db, idHash, windowStartOf(now))
        : limiter.hit(`dashboard-session:${idHash}`, now);
    enforceWindow(
      res,
      limits.perSession,
      count,
      now,
      `Too many requests in this session: at most ${limits.perSession} a minute. Try again in ${secondsUntilNextWindow(now)} s.`,
    );
  };
}

export type DashboardLimiter = ReturnType<typeof dashboardLimiter>;
