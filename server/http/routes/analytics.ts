import type { Contract } from "../../../contract/contract.ts";
import { brandAnalytics } from "../../services/analytics.ts";
import type { ServiceContext } from "../../services/context.ts";
import { componentValidator } from "../contract-schemas.ts";
import type { OperationHandler } from "../dispatch.ts";
import { analyticsHead, analyticsStream } from "../response-bodies.ts";
import { tenancyOf } from "../tenancy.ts";
import { sendStreamedJson } from "../streamed-json.ts";

/** The tenancy's analytics for a period: GET /analytics and the dashboard's analytics, so the numbers are the same. */
export function analyticsHandler(
  ctx: ServiceContext,
  contract: Contract,
): OperationHandler<"getAnalytics" | "dashboardGetAnalytics"> {
  const validateHead = componentValidator(contract, "Analytics");
  const validateItem = componentValidator(contract, "AnalyticsStream");
  return async (req, res) => {
    const result = await brandAnalytics(ctx, tenancyOf(req, res), req.query.period, req.query.stream_id ?? null);
    // A month of a large brand's streams is megabytes: written out batch by batch, each stream
    // checked against the contract, instead of one array built, validated and serialised whole.
    await sendStreamedJson(res, {
      head: analyticsHead(result),
      validateHead,
      batches: presented(result.streams),
      validateItem,
    });
  };
}

async function* presented(batches: AsyncIterable<Parameters<typeof analyticsStream>[0][]>) {
  for await (const batch of batches) yield batch.map(analyticsStream);
}
