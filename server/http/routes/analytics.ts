import { Router } from "express";
import type { Period } from "../../domain/analytics.ts";
import { brandAnalytics } from "../../services/analytics.ts";
import type { ServiceContext } from "../../services/context.ts";
import { callerOf } from "../guard.ts";
import { analytics } from "../presenters.ts";

export function analyticsRoutes(ctx: ServiceContext): Router {
  const router = Router();
  router.get("/analytics", async (req, res) => {
    const caller = callerOf(res);
    const period = (req.query.period as Period | undefined) ?? "7d";
    const streamId = (req.query.stream_id as string | undefined) ?? null;
    res.json(analytics(await brandAnalytics(ctx, { brandId: caller.brand.id, mode: caller.mode }, period, streamId)));
  });
  return router;
}
