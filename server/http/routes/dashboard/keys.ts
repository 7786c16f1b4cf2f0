/** The brand's API keys of one mode: listed with their last use, created and revoked from the dashboard. */
import { isUuid } from "../../../domain/ids.ts";
import { keyHint } from "../../../domain/keys.ts";
import { planAllowsLiveKeys } from "../../../domain/plans.ts";
import type { Brand, Mode } from "../../../domain/types.ts";
import { ApiError } from "../../../domain/errors.ts";
import type { ServiceContext } from "../../../services/context.ts";
import { changingKeys } from "../../../store/request-windows.ts";
import { createKey, keysOf } from "../../../services/operator.ts";
import { keyLastUse } from "../../../store/dashboard-reads.ts";
import { lockBrandKey, revokeKey } from "../../../store/keys.ts";
import { dashboardCallerOf } from "../../dashboard-session.ts";
import type { OperationHandlers } from "../../dispatch.ts";
import { keyCreated } from "../../response-bodies.ts";
import { tenancyOf } from "../../tenancy.ts";
import { audited } from "./actors.ts";

/** Live mode needs the Growth plan or above, as the API's guard answers a live key (402). */
export function refuseLiveBelowGrowth(brand: Brand, mode: Mode): void {
  if (mode === "live" && !planAllowsLiveKeys(brand.plan))
    throw new ApiError(
      "plan_required",
      "Live keys need the Growth plan or above; ask the operator to change the plan.",
    );
}

export function keyHandlers(
  ctx: ServiceContext,
): OperationHandlers<"dashboardListKeys" | "dashboardCreateKey" | "dashboardRevokeKey"> {
  return {
    async dashboardListKeys(req, res) {
      const { brandId, mode } = tenancyOf(req, res);
      const keys = await keysOf(ctx.db, brandId, ctx.clock(), mode);
      const lastUse = await keyLastUse(
        ctx.db,
        keys.map((key) => key.id),
      );
      res.json({
        keys: keys.map((key) => ({
          key_id: key.id,
          name: key.name,
          key_hint: keyHint(key.environment, key.lastFour),
          environment: key.environment,
          scopes: key.scopes,
          created_at: key.createdAt.toISOString(),
          last_used_at: lastUse.get(key.id)?.toISOString() ?? null,
          expires_at: key.expiresAt?.toISOString() ?? null,
          revoked_at: key.revokedAt?.toISOString() ?? null,
        })),
      });
    },

    async dashboardCreateKey(req, res) {
      const { brand } = dashboardCallerOf(res);
      const { mode } = tenancyOf(req, res);
      refuseLiveBelowGrowth(brand, mode);
      const body = req.body;
      // The operator's own key service: the same generation, hashing and fixed scopes.
      const scopes = [...new Set(body.scopes)];
      const onCreated = audited(ctx.clock, req, res, {
        action: "key.created",
        mode,
        targetName: body.name,
        detail: `Created key "${body.name}" (${scopes.join(", ")}).`,
      });
      const { record, key } = await createKey(
        ctx.db,
        { brand_id: brand.id, name: body.name, environment: mode, scopes, expires_at: body.expires_at ?? null },
        ctx.clock(),
        { onCreated },
      );
      res.status(201).json(keyCreated(record, key));
    },

    async dashboardRevokeKey(req, res) {
      const { brandId, mode } = tenancyOf(req, res);
      const id = req.params.key_id;
      if (!isUuid(id)) throw new ApiError("not_found", `No active ${mode} key with id ${id}.`);
      // The operator's revocation and its audit entry in one transaction; the key locked, so a
      // second click waits and finds it revoked.
      // The memo of API keys (store/request-windows.ts) forgets what it holds once this has committed.
      await changingKeys(ctx.db, () =>
        ctx.db.transaction(async (tx) => {
          const key = await lockBrandKey(tx, brandId, id);
          if (!key || key.environment !== mode || key.revokedAt !== null)
            throw new ApiError("not_found", `No active ${mode} key with id ${id}.`);
          await revokeKey(tx, id, ctx.clock());
          // Named as the list shows it, so the log says which key went.
          const hint = keyHint(key.environment, key.lastFour);
          await audited(ctx.clock, req, res, {
            action: "key.revoked",
            mode,
            targetName: key.name,
            detail: `Revoked key "${key.name}"${hint ? ` (${hint})` : ""}.`,
          })(tx, id);
        }),
      );
      res.json({ key_id: id, revoked: true });
    },
  };
}
