/**
 * The dashboard API's handlers (tag Dashboard in openapi.yaml) and the operator's recovery of
 * members, by area: the member's own account and sessions, the brand's team, keys, webhooks
 * (read-only) and streams. Streams and analytics are the API's own handlers (routes/streams.ts,
 * routes/analytics.ts), in the tenancy http/tenancy.ts reads.
 */
import type { Contract } from "../../../../contract/contract.ts";
import type { ServiceContext } from "../../../services/context.ts";
import type { MembersContext } from "../../../services/members/context.ts";
import { activeStreamCount } from "../../../store/dashboard-reads.ts";
import { type DashboardHttpOptions, dashboardCallerOf } from "../../dashboard-session.ts";
import type { OperationHandlers, ServedOperationId } from "../../dispatch.ts";
import { tenancyOf } from "../../tenancy.ts";
import { accountHandlers } from "./account.ts";
import { keyHandlers } from "./keys.ts";
import { presentBrand } from "./response-bodies.ts";
import { sessionHandlers } from "./sessions.ts";
import { dashboardStreamHandlers } from "./streams.ts";
import { teamHandlers } from "./team.ts";
import { webhookViewHandlers } from "./webhooks.ts";
import { getRequestHandler, listRequestsHandler } from "../requests.ts";
import { testClockBody } from "../test-clock.ts";
import { readTestClock } from "../../../services/test-clock.ts";

/** The dashboard API's operations and the operator's invitation, reset and throttle clearing. */
export type DashboardOperationId =
  | Extract<ServedOperationId, `dashboard${string}`>
  | "adminInviteMember"
  | "adminIssuePasswordReset"
  | "adminClearSignInThrottle";

export interface DashboardDeps {
  ctx: ServiceContext;
  members: MembersContext;
  http: DashboardHttpOptions;
  contract: Contract;
  /** Requests of the brand in the current minute (the API's rate-limit window). */
  requestsThisMinute(brandId: string): Promise<number>;
}

export function dashboardHandlers(deps: DashboardDeps): OperationHandlers<DashboardOperationId> {
  const { ctx, http } = deps;
  return {
    ...accountHandlers(deps.members, http),
    ...sessionHandlers(deps.members, http),
    ...teamHandlers(deps.members, http),
    ...keyHandlers(ctx),
    ...webhookViewHandlers(ctx),
    ...dashboardStreamHandlers(ctx, deps.contract),
    // The request log of the mode: the API's own handlers, in the tenancy http/tenancy.ts reads.
    dashboardListRequests: listRequestsHandler(ctx),
    dashboardGetRequest: getRequestHandler(ctx),

    async dashboardGetOverview(req, res) {
      const { brand } = dashboardCallerOf(res);
      const { mode } = tenancyOf(req, res);
      const [active, requests, clock] = await Promise.all([
        activeStreamCount(ctx.db, brand.id, mode),
        deps.requestsThisMinute(brand.id),
        mode === "test" ? readTestClock(ctx, brand.id) : undefined,
      ]);
      res.json({
        brand: presentBrand(brand),
        mode,
        credits_cents: brand.creditsCents,
        credits_held_cents: brand.creditsHeldCents,
        credits_available_cents: Math.max(0, brand.creditsCents - brand.creditsHeldCents),
        plan_minutes: brand.planMinutes,
        minutes_used: brand.minutesUsed,
        minutes_left: Math.max(0, brand.planMinutes - brand.minutesUsed),
        active_streams: active,
        max_active_streams: brand.maxActiveStreams,
        requests_this_minute: requests,
        rate_limit_per_minute: brand.rateLimitPerMinute,
        ...(clock ? { test_clock: testClockBody(clock) } : {}),
      });
    },
  };
}
