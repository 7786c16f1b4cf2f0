/** The request log, read: GET /requests and GET /requests/{request_id}, and the dashboard's Logs page through the same handlers. */
import { type components, requestLogEntryMethodValues } from "../../../generated/api.ts";
import { keyHint } from "../../domain/keys.ts";
import type { ServiceContext } from "../../services/context.ts";
import { getRequest, listRequests } from "../../services/request-log.ts";
import type { StoredRequest } from "../../store/request-log.ts";
import type { OperationHandler, OperationHandlers } from "../dispatch.ts";
import { documented } from "../response-bodies.ts";
import { tenancyOf } from "../tenancy.ts";

type Schemas = components["schemas"];

export function requestLogEntry(entry: StoredRequest): Schemas["RequestLogEntry"] {
  return {
    id: entry.id,
    request_id: entry.requestId,
    created_at: entry.createdAt.toISOString(),
    method: documented(requestLogEntryMethodValues, entry.method, "a logged request's method"),
    path: entry.path,
    query: entry.query,
    status: entry.status,
    error_code: entry.errorCode,
    duration_ms: entry.durationMs,
    key_name: entry.keyName,
    key_hint: keyHint(entry.mode, entry.keyLastFour),
    client_address: entry.clientAddress,
    idempotency_key: entry.idempotencyKey,
    replayed: entry.replayed,
  };
}

export function requestLogDetail(entry: StoredRequest): Schemas["RequestLogDetail"] {
  return {
    request: requestLogEntry(entry),
    request_body: entry.requestBody,
    request_body_truncated: entry.requestBodyTruncated,
    response_body: entry.responseBody,
    response_body_truncated: entry.responseBodyTruncated,
  };
}

/** A page of the tenancy's log: GET /requests, and the dashboard's list of a mode's. */
export function listRequestsHandler(ctx: ServiceContext): OperationHandler<"listRequests" | "dashboardListRequests"> {
  return async (req, res) => {
    const { entries, hasMore } = await listRequests(ctx, tenancyOf(req, res), req.query);
    res.json({ requests: entries.map(requestLogEntry), has_more: hasMore });
  };
}

/** One of the tenancy's logged requests with its bodies: GET /requests/{request_id}, and the dashboard's. */
export function getRequestHandler(ctx: ServiceContext): OperationHandler<"getRequest" | "dashboardGetRequest"> {
  return async (req, res) => {
    res.json(requestLogDetail(await getRequest(ctx, tenancyOf(req, res), req.params.request_id)));
  };
}

export function requestLogHandlers(ctx: ServiceContext): OperationHandlers<"listRequests" | "getRequest"> {
  return { listRequests: listRequestsHandler(ctx), getRequest: getRequestHandler(ctx) };
}
