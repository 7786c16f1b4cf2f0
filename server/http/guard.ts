import type { NextFunction, Request, RequestHandler, Response } from "express";
import { addressBucket } from "../domain/ip-address.ts";
import { planAllowsLiveKeys } from "../domain/plans.ts";
import { ApiError } from "../domain/errors.ts";
import { authenticate, type Caller, KnownKeyRefused, knownKeyOf } from "../services/auth.ts";
import type { Clock } from "../services/context.ts";
import type { KeyUseRecorder } from "../services/key-use.ts";
import type { FixedWindowCounter } from "../domain/rate-window.ts";
import type { RequestWindows } from "../store/request-windows.ts";
import { clientAddress } from "./client-address.ts";
import { operationOf } from "./operation-routes.ts";
import { enforceWindow } from "./rate-limiter.ts";

/**
 * Limit for GET / without a key, counted per client address (client-address.ts: behind TRUST_PROXY,
 * the proxy's word; an IPv6 client by its /64, domain/ip-address.ts `addressBucket`).
 */
const ANONYMOUS_LIMIT_PER_MINUTE = 100;

export function callerOf(res: Response): Caller {
  const caller = res.locals.caller;
  // A route the guard did not authenticate is refused like any unauthenticated call, never served.
  if (!caller) throw new ApiError("unauthorized");
  return caller;
}

export interface GuardDeps {
  clock: Clock;
  /** Counts `GET /` without a key per client address. */
  addresses: FixedWindowCounter;
  /** Finds keys and counts brands' windows. */
  windows: RequestWindows;
  /** Notes a key's use for the dashboard's "last used" (writing at most once a minute per key). */
  recordKeyUse?: KeyUseRecorder;
}

type BrandCounter = (header: string | undefined, now: Date) => Promise<{ caller: Caller; count: number }>;

/**
 * Authenticates a request and counts it in its brand's window; a 401 is counted nowhere. A key
 * that authenticates has been used, whatever the answer.
 */
function brandCounter({ windows, recordKeyUse }: GuardDeps): BrandCounter {
  const count: BrandCounter = (header, now) => authenticate(windows, header, now);
  if (!recordKeyUse) return count;
  return async (header, now) => {
    const counted = await count(header, now);
    // Not awaited: a slow write of the last use (a lock on api_keys) must not hold the request.
    void recordKeyUse(counted.caller.keyId, now);
    return counted;
  };
}

/**
 * Runs the checks that precede validation, in the documented order: 401 → 429 rate_limited →
 * 403 insufficient_scope → 402 plan_required. The scope of each operation is read from the
 * contract (`x-required-scope`), so the endpoint index lives in one place. Once the key is known,
 * the answer carries the brand's `RateLimit-*` headers, whatever comes next.
 */
export function apiGuard(deps: GuardDeps): RequestHandler {
  const countBrand = brandCounter(deps);
  return async function guard(req: Request, res: Response, next: NextFunction) {
    try {
      const operation = operationOf(res);
      if (!operation || operation.admin || operation.dashboard) return next();
      const now = deps.clock();
      if (operation.scope === null) {
        // GET /creators is public and never limited; GET / is limited per brand with a valid key,
        // per client address without one.
        if (operation.operationId !== "listCreators") await limitDiscovery(deps.addresses, countBrand, req, res, now);
        return next();
      }
      const { caller, count } = await countBrand(req.headers.authorization, now);
      // From here the request is the brand's, whatever the answer: its log records it.
      res.locals.loggedKey = knownKeyOf(caller, now);
      limitBrand(res, caller, count, now);
      if (!caller.scopes.some((scope) => scope === operation.scope)) {
        throw new ApiError(
          "insufficient_scope",
          `This API key lacks the ${operation.scope} scope that ${operation.method} ${operation.path} requires; create a key with it.`,
        );
      }
      if (caller.mode === "live" && !planAllowsLiveKeys(caller.brand.plan)) throw new ApiError("plan_required");
      res.locals.caller = caller;
      next();
    } catch (error) {
      // A real key, revoked or expired: its brand's request log records the 401.
      if (error instanceof KnownKeyRefused) res.locals.loggedKey = { ...error.key, at: deps.clock() };
      next(error);
    }
  };
}

function limitBrand(res: Response, caller: Caller, count: number, now: Date): void {
  enforceWindow(res, caller.brand.rateLimitPerMinute, count, now);
}

async function limitDiscovery(
  addresses: FixedWindowCounter,
  countBrand: BrandCounter,
  req: Request,
  res: Response,
  now: Date,
): Promise<void> {
  const counted = req.headers.authorization ? await countBrand(req.headers.authorization, now).catch(() => null) : null;
  if (counted) {
    res.locals.loggedKey = knownKeyOf(counted.caller, now);
    return limitBrand(res, counted.caller, counted.count, now);
  }
  if (addresses.hit(`ip:${addressBucket(clientAddress(req))}`, now) > ANONYMOUS_LIMIT_PER_MINUTE)
    throw new ApiError("rate_limited");
}
