import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { operations } from "../../generated/api.ts";
import type { ContractOperation } from "../../contract/operations.ts";

/** Every operation of openapi.yaml's paths, by its operationId (the webhooks' `…Event` entries are sent, not served). */
export type ServedOperationId = Exclude<keyof operations, `${string}Event`>;

/** The path parameters of the operation, by their names in openapi.yaml. */
type PathParams = Record<string, string>;

/** Answers one operation. The caller, if the operation needs a key, is in `res.locals` (see callerOf). */
export type OperationHandler = (req: Request<PathParams>, res: Response) => void | Promise<void>;

export type OperationHandlers<Id extends ServedOperationId = ServedOperationId> = { readonly [K in Id]: OperationHandler };

/**
 * Sends each request to its operation's handler, by the operation the guard resolved
 * (`res.locals.operation`), instead of routing it again through Express routers: one layer, one
 * map look-up. `handlers` must name every operation of the contract, so an operation added to
 * openapi.yaml without a handler fails to compile. A request no operation matched goes on to the
 * 404 answer.
 */
export function dispatchOperations(handlers: OperationHandlers): RequestHandler {
  const byId = new Map<string, OperationHandler>(Object.entries(handlers));
  return function dispatchOperation(req: Request, res: Response, next: NextFunction) {
    const operation = res.locals.operation as ContractOperation | undefined;
    const handler = operation && byId.get(operation.operationId);
    if (!handler) return next();
    // Express gives each layer its own `req.params` (empty for this one); the validator's match
    // of the operation's path holds them.
    req.params = (req as Request & { openapi?: { pathParams?: PathParams } }).openapi?.pathParams ?? {};
    try {
      const answered = handler(req as Request<PathParams>, res);
      if (answered) answered.catch(next);
    } catch (error) {
      next(error);
    }
  };
}
