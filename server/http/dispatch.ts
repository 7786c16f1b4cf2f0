import type { NextFunction, Request, Response } from "express";
import type { operations } from "../../generated/api.ts";
import type { QueryDefaults } from "../../generated/query-defaults.ts";
import { routeOf } from "./operation-routes.ts";

/** Every operation of openapi.yaml's paths, by its operationId (the webhooks' `…Event` entries are sent, not served). */
export type ServedOperationId = Exclude<keyof operations, `${string}Event`>;

/** A part of the operation's request as the contract states it; `None` where it states none. */
type StatedOr<Part, None> = [NonNullable<Part>] extends [never] ? None : NonNullable<Part>;

/** The operation's path parameters, by their names in openapi.yaml (none where its path has no template). */
type PathParamsOf<Id extends ServedOperationId> = StatedOr<operations[Id]["parameters"]["path"], Record<string, never>>;

/** The operation's JSON request body, as the contract states it (undefined where it takes none). */
type RequestBodyOf<Id extends ServedOperationId> = JsonContentOf<NonNullable<operations[Id]["requestBody"]>>;
type JsonContentOf<Body> = [Body] extends [never]
  ? undefined
  : Body extends { content: { "application/json": infer Json } }
    ? Json
    : undefined;

/**
 * The operation's query parameters, as the contract states them (none where it takes none), those
 * with a contract `default` always present: validation fills them in (generated/query-defaults.ts).
 */
type QueryOf<Id extends ServedOperationId> = WithDefaults<
  StatedOr<operations[Id]["parameters"]["query"], Record<string, never>>,
  Id extends keyof QueryDefaults ? QueryDefaults[Id] : never
>;
type WithDefaults<Query, Defaulted extends PropertyKey> = [Defaulted] extends [never]
  ? Query
  : Omit<Query, Defaulted> & Required<Pick<Query, Defaulted & keyof Query>>;

/**
 * A request of the operation `Id` as its handler gets it: the path parameters, the query and the
 * body validated against the contract (http/validator.ts) before any handler runs, so typed as
 * the contract states them. The query is the validated one: coerced to its schemas' types, with
 * the contract's defaults. A handler shared by several operations gets a request of any of them.
 */
export type OperationRequest<Id extends ServedOperationId = ServedOperationId> = OperationRequests[Id];
type OperationRequests = {
  [Id in ServedOperationId]: Request<PathParamsOf<Id>, unknown, RequestBodyOf<Id>, QueryOf<Id>>;
};

/**
 * Answers one operation. The caller, if the operation needs a key, is in `res.locals` (see callerOf).
 * A handler of several operations is a handler of each of them.
 */
export type OperationHandler<Id extends ServedOperationId = ServedOperationId> = (
  req: OperationRequest<Id>,
  res: Response,
) => void | Promise<void>;

/**
 * A handler of any operation, as the dispatcher holds them. The one boundary between Express's
 * untyped request and the contract's types: each handler is called only with requests of its own
 * operation, validated against its schemas first, so its parameters, body and query are left
 * untyped here.
 */
// biome-ignore lint/suspicious/noExplicitAny: each handler states its own operation's request (see above)
export type AnyOperationHandler = (req: Request<any, unknown, any, any>, res: Response) => void | Promise<void>;

export type OperationHandlers<Id extends ServedOperationId = ServedOperationId> = {
  readonly [K in Id]: OperationHandler<K>;
};

/**
 * Sends each request to the handler of the operation it was resolved to (operation-routes.ts),
 * instead of routing it again through Express routers: one layer, no look-up. The handlers are
 * given to the contract edge (`OperationHandlers` must name every operation of the contract, so
 * an operation added to openapi.yaml without a handler fails to compile). A request no operation
 * matched goes on to the 404 answer.
 */
export function dispatchOperation(req: Request, res: Response, next: NextFunction): void {
  const route = routeOf(res);
  const handler = route?.handler;
  if (!handler) return next();
  // Express gives each layer its own `req.params` (empty for this one): the resolved ones.
  req.params = { ...route.params };
  try {
    const answered = handler(req, res);
    if (answered) answered.catch(next);
  } catch (error) {
    next(error);
  }
}
