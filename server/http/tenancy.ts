import type { Response } from "express";
import { keyCreateEnvironmentValues } from "../../generated/api.ts";
import type { Mode, Tenancy } from "../domain/types.ts";
import { ApiError } from "../domain/errors.ts";

const isMode = (value: string | undefined): value is Mode => keyCreateEnvironmentValues.some((mode) => mode === value);

/**
 * The brand and mode a request acts in, whoever made it: an API key's brand and environment
 * (guard.ts), or a signed-in member's brand and the `{mode}` of the dashboard path (validated
 * against the contract's enum before any handler runs). One resolver, so a handler shared by the
 * API and the dashboard acts in the same tenancy either way.
 */
export function tenancyOf(req: { readonly params: Readonly<Record<string, string>> }, res: Response): Tenancy {
  const { caller, dashboard } = res.locals;
  if (caller) return { brandId: caller.brand.id, mode: caller.mode };
  if (dashboard) {
    const { mode } = req.params;
    if (isMode(mode)) return { brandId: dashboard.brand.id, mode };
    throw new Error(`tenancyOf: a dashboard operation without a {mode} in its path (${mode})`);
  }
  // A route neither guard authenticated is refused like any unauthenticated call, never served.
  throw new ApiError("unauthorized");
}
