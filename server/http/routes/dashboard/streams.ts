/** A mode's streams from the dashboard: listed, read, analysed as the API does, and started and ended with an audit entry. */
import type { Contract } from "../../../../contract/contract.ts";
import type { ServiceContext } from "../../../services/context.ts";
import { endStream, startStream } from "../../../services/streams.ts";
import type { Queryable } from "../../../store/database.ts";
import { findStream } from "../../../store/streams.ts";
import { dashboardCallerOf } from "../../dashboard-session.ts";
import type { OperationHandlers } from "../../dispatch.ts";
import { streamCreated, streamEnded } from "../../response-bodies.ts";
import { tenancyOf } from "../../tenancy.ts";
import { analyticsHandler } from "../analytics.ts";
import { getStreamHandler, listStreamsHandler } from "../streams.ts";
import { audited } from "./actors.ts";
import { refuseLiveBelowGrowth } from "./keys.ts";
import { timelineHandlers } from "./timeline.ts";

export function dashboardStreamHandlers(
  ctx: ServiceContext,
  contract: Contract,
): OperationHandlers<
  | "dashboardListStreams"
  | "dashboardGetStream"
  | "dashboardCreateStream"
  | "dashboardEndStream"
  | "dashboardGetAnalytics"
  | "dashboardGetStreamTimeline"
> {
  return {
    // The API's own handlers: the tenancy is the member's brand and the path's mode.
    dashboardListStreams: listStreamsHandler(ctx),
    dashboardGetStream: getStreamHandler(ctx),
    dashboardGetAnalytics: analyticsHandler(ctx, contract),
    ...timelineHandlers(ctx),

    async dashboardCreateStream(req, res) {
      const { brand } = dashboardCallerOf(res);
      const { mode } = tenancyOf(req, res);
      // The API's guard answers a live key on a plan below Growth 402 before anything else; so here.
      refuseLiveBelowGrowth(brand, mode);
      const body = req.body;
      const onCreated = audited(ctx.clock, req, res, {
        action: "stream.started",
        mode,
        targetName: body.product_name,
        detail: `Started "${body.product_name}" on ${body.platform}.`,
      });
      const stream = await startStream(ctx, brand, mode, body, { source: "dashboard", onCreated });
      res.status(201).json(streamCreated(stream));
    },

    async dashboardEndStream(req, res) {
      const tenancy = tenancyOf(req, res);
      // Named by its product, read in the transaction that ends it.
      const onEnded = async (tx: Queryable, id: string) => {
        const product = (await findStream(tx, tenancy, id))?.productName ?? null;
        await audited(ctx.clock, req, res, {
          action: "stream.ended",
          mode: tenancy.mode,
          targetName: product,
          detail: product === null ? "Ended a stream." : `Ended "${product}".`,
        })(tx, id);
      };
      const stream = await endStream(ctx, tenancy, req.params.id, { onEnded });
      res.json(streamEnded(stream));
    },
  };
}
