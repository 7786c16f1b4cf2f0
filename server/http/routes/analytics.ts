import type { Contract } from "../../../contract/contract.ts";
import type { Period } from "../../domain/analytics.ts";
import { brandAnalytics } from "../../services/analytics.ts";
import type { ServiceContext } from "../../services/context.ts";
import { componentValidator } from "../contract-schemas.ts";
import type { OperationHandlers } from "../dispatch.ts";
import { callerOf } from "../guard.ts";
import { analyticsHead, analyticsStream } from "../presenters.ts";
import { sendStreamedJson } from "../streamed-json.ts";

export function analyticsHandlers(ctx: ServiceContext, contract: Contract): OperationHandlers<"getAnalytics"> {
  const validateHead = componentValidator(contract, "Analytics");
  const validateItem = componentValidator(contract, "AnalyticsStream");
  const defaultPeriod = contract.limits.periods.default as Period;
  return {
    async getAnalytics(req, res) {
      const caller = callerOf(res);
      const period = (req.query.period as Period | undefined) ?? defaultPeriod;
      const streamId = (req.query.stream_id as string | undefined) ?? null;
      const result = await brandAnalytics(ctx, { brandId: caller.brand.id, mode: caller.mode }, period, streamId);
      // A month of a large brand's streams is megabytes: written out batch by batch, each stream
      // checked against the contract, instead of one array built, validated and serialised whole.
      await sendStreamedJson(res, {
        head: analyticsHead(result),
        validateHead,
        batches: presented(result.streams),
        validateItem,
      });
    },
  };
}

async function* presented(batches: AsyncIterable<Parameters<typeof analyticsStream>[0][]>) {
  for await (const batch of batches) yield batch.map(analyticsStream);
}
