import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { Contract } from "../../contract/contract.ts";
import { announcesBody } from "./body-limit.ts";
import { ApiError } from "../domain/errors.ts";
import { ResponseInvalid } from "./contract-validation.ts";
import { operationRoutes, resolveOperation, routeOf } from "./operation-routes.ts";

/** The body's media type, when one was sent: only JSON is read. */
function isJson(req: Request): boolean {
  const type = req.headers["content-type"];
  return typeof type === "string" && /^\s*application\/json\s*(?:;|$)/i.test(type);
}

/**
 * Runs the operation's rule (operation-rules.ts), then validates the request against its
 * schemas in openapi.yaml (400, answered by the error handler), and leaves the validated query
 * where the handler reads it, as `req.query`: the query as the rule settled it, coerced, with the
 * contract's defaults. The body's defaults are filled in place. Every `res.json` answer of the
 * operation below 500 is checked against the response documented for its status: one the contract
 * does not document becomes a logged 500, not a silent drift.
 */
export function validateRequest(req: Request, res: Response, next: NextFunction): void {
  const route = routeOf(res);
  if (!route) return next();
  const { operation, rule, validation } = route;
  const params = { ...route.params };
  let query: Record<string, unknown>;
  try {
    rule.checkBody?.({ body: req.body, params: route.params }, res);
    if (operation.requestSchema && announcesBody(req) && Number(req.headers["content-length"]) !== 0 && !isJson(req))
      throw new ApiError("missing_fields", "The request body must be JSON, sent with Content-Type: application/json.");
    query = rule.settleQuery ? rule.settleQuery(req.query) : { ...req.query };
    validation.request({ params, query, headers: req.headers, body: req.body });
  } catch (error) {
    return next(error);
  }
  // Express 5 parses `req.query` from the URL on every read: the validated one is kept instead.
  Object.defineProperty(req, "query", { value: query, writable: true, configurable: true, enumerable: true });
  const json = res.json;
  res.json = function checkedJson(this: Response, body: unknown) {
    res.json = json;
    if (res.headersSent || res.statusCode >= 500) return json.call(this, body);
    const problem = validation.response(res.statusCode, body);
    if (problem) {
      next(new ResponseInvalid(`${operation.operationId} answered ${res.statusCode} outside the contract: ${problem}`));
      return res;
    }
    return json.call(this, body);
  };
  next();
}

/**
 * The contract's resolution and validation alone, for the benchmark's framework ceiling
 * (bench/servers/framework.ts): the server's own steps, so the two cannot drift apart.
 */
export function contractValidator(contract: Contract): RequestHandler[] {
  return [resolveOperation(contract, operationRoutes(contract)), validateRequest];
}
