import type { NextFunction, Request, Response } from "express";
import type { operations } from "../../generated/api.ts";
import { routeOf } from "./operation-context.ts";

/** Every operation of openapi.yaml's paths, by its operationId (the webhooks' `…Event` entries are sent, not served). */
export type ServedOperationId = Exclude<keyof operations, `${string}Event`>;

/** The path parameters of the operation, by their names in openapi.yaml. */
type PathParams = Record<string, string>;

/** The operation's JSON request body, as the contract states it (undefined where it takes none). */
type RequestBodyOf<Id extends ServedOperationId> = JsonContentOf<NonNullable<operations[Id]["requestBody"]>>;
type JsonContentOf<Body> = [Body] extends [never]
  ? undefined
  : Body extends { content: { "application/json": infer Json } }
    ? Json
    : undefined;

/** The operation's query parameters, as the contract states them (none where it takes none). */
type QueryOf<Id extends ServedOperationId> = [NonNullable<operations[Id]["parameters"]["query"]>] extends [never]
  ? Record<string, never>
  : NonNullable<operations[Id]["parameters"]["query"]>;

/**
 * A request of the operation `Id` as its handler gets it: the body and the query validated against
 * the contract (http/validator.ts) before any handler runs, so typed as the contract states them.
 * The query is the validated one: coerced to its schemas' types, with the contract's defaults.
 */
export type OperationRequest<Id extends ServedOperationId = ServedOperationId> = Request<
  PathParams,
  unknown,
  RequestBodyOf<Id>,
  QueryOf<Id>
>;

/** Answers one operation. The caller, if the operation needs a key, is in `res.locals` (see callerOf). */
export type OperationHandler<Id extends ServedOperationId = ServedOperationId> = (
  req: OperationRequest<Id>,
  res: Response,
) => void | Promise<void>;

/**
 * A handler of any operation, as the dispatcher holds them: each is called with its own
 * operation's requests, so the body and query are left untyped here.
 */
// biome-ignore lint/suspicious/noExplicitAny: each handler states its own operation's body and query
export type AnyOperationHandler = (req: Request<PathParams, unknown, any, any>, res: Response) => void | Promise<void>;

export type OperationHandlers<Id extends ServedOperationId = ServedOperationId> = {
  readonly [K in Id]: OperationHandler<K>;
};

/**
 * Sends each request to the handler of the operation it was resolved to (operation-context.ts),
 * instead of routing it again through Express routers: one layer, no look-up. The handlers are
 * given to the contract edge (`OperationHandlers` must name every operation of the contract, so
 * an operation added to openapi.yaml without a handler fails to compile). A request no operation
 * matched goes on to the 404 answer.
 */
export function dispatchOperation(req: Request, res: Response, next: NextFunction): void {
  const route = routeOf(res);
  const handler = route?.context.handler;
  if (!handler) return next();
  // Express gives each layer its own `req.params` (empty for this one): the resolved ones.
  req.params = { ...route.params };
  try {
    const answered = handler(req as Request<PathParams>, res);
    if (answered) answered.catch(next);
  } catch (error) {
    next(error);
  }
}
