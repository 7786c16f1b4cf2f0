import type { RequestHandler, Response } from "express";
import { clientAddress } from "./client-address.ts";
import { operationOf } from "./operation-routes.ts";
import type { Caller } from "../services/auth.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { RequestLogWriter } from "../observability/request-log.ts";

/** The operations endpoints (http/routes/ops.ts), named by their path; logged at debug, as probes call them every few seconds. */
export const OPS_PATHS: ReadonlyMap<string, string> = new Map([
  ["/healthz", "healthz"],
  ["/readyz", "readyz"],
  ["/metrics", "metrics"],
]);
const OPS_OPERATIONS = new Set(OPS_PATHS.values());

/**
 * The label of a request no contract operation was resolved for: an operations endpoint, `docs`,
 * or `unknown`. `originalUrl` because routers strip their prefix from `url`.
 */
function labelOf(originalUrl: string): string {
  const query = originalUrl.indexOf("?");
  const path = query === -1 ? originalUrl : originalUrl.slice(0, query);
  const ops = OPS_PATHS.get(path);
  if (ops) return ops;
  if (path === "/docs" || path.startsWith("/docs/")) return "docs";
  return "unknown";
}

/** The request id the pipeline gave the request (http/pipeline.ts), as its `Request-Id` header carries it. */
function requestIdOf(res: Response): string | undefined {
  const id = res.locals.requestId ?? res.get("Request-Id");
  return typeof id === "string" ? id : undefined;
}

/** A request's log line; pino omits the fields left undefined. */
interface RequestLine {
  request_id: string | undefined;
  method: string;
  operation: string;
  status: number;
  latency_ms: number;
  brand_id: string | undefined;
  mode: string | undefined;
  code: string | undefined;
  client_address: string;
}

/**
 * Mounted first: when a response has been sent, writes one log line (request id, method,
 * operation, status, latency, the brand when authenticated, the error code of a refusal, the
 * client's address as every per-address limit sees it: http/client-address.ts) and
 * counts it in the metrics. Never the URL, a header, a key or a body: ids, numbers and the address only.
 * A request made with a brand's key is also handed to the brand's request log (`requestLog`,
 * observability/request-log.ts), which writes it later, redacted.
 */
export function observeRequests({
  logger,
  metrics,
  requestLog,
}: {
  logger: Logger;
  metrics: Metrics | undefined;
  requestLog?: RequestLogWriter | undefined;
}): RequestHandler {
  // One listener for every response (it reads the request from `res.req`): no closure and no
  // once-wrapper made per request. Finish is emitted once per response.
  function requestFinished(this: Response): void {
    const req = this.req;
    const seconds = (performance.now() - (this.locals.startedAt ?? performance.now())) / 1000;
    // The operation resolved once by the contract edge (http/operation-routes.ts).
    const operation = operationOf(this)?.operationId ?? labelOf(req.originalUrl);
    const status = this.statusCode;
    const code = this.locals.errorCode;
    if (metrics) {
      metrics.httpRequests.inc({ operation, status: String(status) });
      metrics.httpDuration.observe({ operation }, seconds);
      if (code === "rate_limited") metrics.rateLimited.inc();
    }
    if (requestLog !== undefined && this.locals.loggedKey !== undefined) requestLog.record(this, seconds * 1000);
    const level = OPS_OPERATIONS.has(operation) ? "debug" : "info";
    if (!logger.isLevelEnabled(level)) return;
    const caller = this.locals.caller;
    // One object shape for every line (absent fields undefined, which pino leaves out), built
    // without spreads: this runs once per request.
    const line: RequestLine = {
      request_id: requestIdOf(this),
      method: req.method,
      operation,
      status,
      latency_ms: Math.round(seconds * 10_000) / 10,
      brand_id: caller?.brand.id,
      mode: caller?.mode,
      code,
      client_address: clientAddress(req),
    };
    logger[level](line, "request");
  }
  return function observeRequest(_req, res, next) {
    res.locals.startedAt = performance.now();
    res.on("finish", requestFinished);
    next();
  };
}
