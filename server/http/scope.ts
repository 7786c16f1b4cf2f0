import type { Request, Response } from "express";
import type { Mode, StreamScope } from "../domain/types.ts";
import { ApiError } from "../domain/errors.ts";

/**
 * The brand and mode a request acts on, whoever made it: an API key's brand and environment
 * (guard.ts), or a signed-in member's brand and the `{mode}` of the dashboard path (validated
 * against the contract's enum before any handler runs). One resolver, so a handler shared by the
 * API and the dashboard reads the same scope either way.
 */
export function scopeOf(req: Pick<Request<Record<string, string>>, "params">, res: Response): StreamScope {
  const { caller, dashboard } = res.locals;
  if (caller) return { brandId: caller.brand.id, mode: caller.mode };
  if (dashboard) return { brandId: dashboard.brand.id, mode: req.params.mode as Mode };
  // A route neither guard authenticated is refused like any unauthenticated call, never served.
  throw new ApiError("unauthorized");
}
