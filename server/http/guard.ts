import type { NextFunction, Request, RequestHandler, Response } from "express";
import { planAllowsLiveKeys } from "../domain/plans.ts";
import type { Scope } from "../domain/types.ts";
import { ApiError } from "../errors.ts";
import { authenticate, type Caller } from "../services/auth.ts";
import type { Clock } from "../services/context.ts";
import type { Queryable } from "../store/database.ts";
import { type ContractOperation, findOperation, isMiscasedOperationPath } from "./contract.ts";
import type { FixedWindowRateLimiter } from "./rate-limiter.ts";

/** Limit for GET / without a key, counted per client address. */
const ANONYMOUS_LIMIT_PER_MINUTE = 100;

function isDecodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

export function callerOf(res: Response): Caller {
  const caller = res.locals.caller as Caller | undefined;
  // A route the guard did not authenticate is refused like any unauthenticated call, never served.
  if (!caller) throw new ApiError("unauthorized");
  return caller;
}

/**
 * The contract operation a request names, or undefined for a path the contract does not know
 * (left to the routers, which answer 404). Throws 404 for a path that could only reach a route
 * by accident: not valid percent-encoding, or an operation's path in another letter case (Express
 * matches routes case-insensitively, so it would reach a route the guard never checked).
 */
export function requestedOperation(operations: readonly ContractOperation[], req: Request): ContractOperation | undefined {
  if (!isDecodable(req.path)) throw new ApiError("not_found", "No such resource: the path is not valid percent-encoding.");
  const operation = findOperation(operations, req.method, req.path);
  if (!operation && isMiscasedOperationPath(operations, req.path)) {
    throw new ApiError("not_found", `No such endpoint: ${req.path}. Paths are case-sensitive; see GET /api/v1/ for the list.`);
  }
  return operation;
}

/**
 * Runs the checks that precede validation, in the documented order: 401 → 429 rate_limited →
 * 403 insufficient_scope → 402 plan_required. The scope of each operation is read from the
 * contract (`x-required-scope`), so the endpoint index lives in one place.
 */
export function apiGuard(deps: { db: Queryable; clock: Clock; operations: readonly ContractOperation[]; limiter: FixedWindowRateLimiter }): RequestHandler {
  return async function guard(req: Request, res: Response, next: NextFunction) {
    try {
      const operation = requestedOperation(deps.operations, req);
      if (!operation || operation.admin) return next();
      const now = deps.clock();
      if (operation.scope === null) {
        // GET /creators is public and never limited; GET / is limited per brand with a valid key,
        // per client address without one.
        if (operation.operationId !== "listCreators") await limitAnonymous(deps, req, now);
        return next();
      }
      const caller = await authenticate(deps.db, req.headers.authorization, now);
      if (!deps.limiter.hit(`brand:${caller.brand.id}`, caller.brand.rateLimitPerMinute, now)) throw new ApiError("rate_limited");
      if (!caller.scopes.includes(operation.scope as Scope)) {
        throw new ApiError("insufficient_scope", `This API key lacks the ${operation.scope} scope that ${operation.method} ${operation.path} requires; create a key with it.`);
      }
      if (caller.mode === "live" && !planAllowsLiveKeys(caller.brand.plan)) throw new ApiError("plan_required");
      res.locals.caller = caller;
      next();
    } catch (error) {
      next(error);
    }
  };
}

async function limitAnonymous(deps: { db: Queryable; limiter: FixedWindowRateLimiter }, req: Request, now: Date): Promise<void> {
  let key = `ip:${req.ip}`;
  let limit = ANONYMOUS_LIMIT_PER_MINUTE;
  if (req.headers.authorization) {
    const caller = await authenticate(deps.db, req.headers.authorization, now).catch(() => null);
    if (caller) {
      key = `brand:${caller.brand.id}`;
      limit = caller.brand.rateLimitPerMinute;
    }
  }
  if (!deps.limiter.hit(key, limit, now)) throw new ApiError("rate_limited");
}
