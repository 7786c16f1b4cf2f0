/**
 * What one request carries from layer to layer in `res.locals`, typed in one place (Express reads
 * `res.locals` as `Express.Locals`): each key is set by one layer and read by those after it.
 */
import type { Caller, KnownKey } from "../services/auth.ts";
import type { DatabaseBudget } from "../store/request-budget.ts";
import type { DashboardCaller } from "./dashboard-session.ts";
import type { ResolvedRoute } from "./operation-routes.ts";

declare global {
  namespace Express {
    interface Locals {
      /** The request log's clock start (http/observe-requests.ts). */
      startedAt?: number;
      /** The Request-Id answered and logged (pipeline.ts). */
      requestId?: string;
      /** The request's database time on PostgreSQL (app.ts). */
      databaseBudget?: DatabaseBudget;
      /** A HEAD served as its GET, ending at the headers (normalize.ts). */
      head?: boolean;
      /** The operation and path parameters the request resolved to (operation-routes.ts). */
      route?: ResolvedRoute;
      /** The API key's caller (guard.ts). */
      caller?: Caller;
      /**
       * The key a public API request was made with, once the guard found it a real key of a brand
       * (usable or not), and when: the request is then written to the brand's request log.
       */
      loggedKey?: KnownKey & { at: Date };
      /** The JSON request body as read (pipeline.ts), for the request log. */
      rawBody?: Buffer;
      /** The answer's body as sent, for the request log (observability/request-log.ts). */
      answerBody?: string;
      /** The signed-in member of a dashboard request (dashboard-session.ts). */
      dashboard?: DashboardCaller;
      /** The code of the error answered, for the request log and metrics (error-handler.ts). */
      errorCode?: string;
    }
  }
}
