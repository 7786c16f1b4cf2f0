import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { Contract } from "../../contract/contract.ts";
import type { ContractOperation } from "../../contract/operations.ts";
import { ApiError } from "../domain/errors.ts";
import { type OperationValidation, operationValidation } from "./contract-validation.ts";
import type { AnyOperationHandler, OperationHandlers } from "./dispatch.ts";

/**
 * Everything the server knows about one operation of openapi.yaml, put together once at start-up:
 * the contract's entry (scope, documented statuses, field error codes), the rule that runs before
 * validation, the validators compiled from its schemas, and its handler. A request finds its
 * context once (resolveOperation); the guard, the body parser, the rule, validation, dispatch,
 * the error handler and the request log all read it from there (routeOf).
 */
export interface OperationContext {
  readonly operation: ContractOperation;
  /** A rule of this operation that runs after the body is read and before validation (normalize.ts). */
  readonly rule: RequestHandler | undefined;
  readonly validation: OperationValidation;
  /** Absent where the app answers in its own way (the mock forwards to Prism). */
  readonly handler: AnyOperationHandler | undefined;
}

/** The request's operation, with its path parameters decoded. */
export interface ResolvedRoute {
  readonly context: OperationContext;
  readonly params: Record<string, string>;
}

export interface OperationRoutes {
  /** The operation a request names (path as served, e.g. `/api/v1/streams/abc`), if any. */
  find(method: string, path: string): ResolvedRoute | undefined;
}

export interface RouteParts {
  /** Operation rules by operationId (pipeline.ts). */
  rules?: ReadonlyMap<string, RequestHandler>;
  /** Every operation's handler (app.ts); none for the mock. */
  handlers?: OperationHandlers;
}

/** The contexts of every operation of the contract, and how a request finds its own. */
export function operationRoutes(contract: Contract, { rules = new Map(), handlers }: RouteParts = {}): OperationRoutes {
  const byHandlers = new Map<string, AnyOperationHandler>(Object.entries(handlers ?? {}));
  const contexts = new Map<ContractOperation, OperationContext>();
  for (const operation of contract.operations.all) {
    contexts.set(operation, {
      operation,
      rule: rules.get(operation.operationId),
      validation: operationValidation(operation),
      handler: byHandlers.get(operation.operationId),
    });
  }
  const noParams: Record<string, string> = Object.freeze({}) as Record<string, string>;
  return {
    find(method, path) {
      const operation = contract.operations.find(method, path);
      if (!operation) return undefined;
      const context = contexts.get(operation)!;
      const names = operation.pathParameterNames;
      if (names.length === 0) return { context, params: noParams };
      // The pattern that matched, read for its groups: one compiler, one trailing-slash rule.
      const values = operation.servedPattern.exec(path)?.slice(1) ?? [];
      const params: Record<string, string> = {};
      names.forEach((name, index) => {
        params[name] = decodeURIComponent(values[index] ?? "");
      });
      return { context, params };
    },
  };
}

function isDecodable(path: string): boolean {
  if (!path.includes("%")) return true;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The contract operation a request names, or undefined for a path the contract does not know
 * (answered 404 at the end). Throws 404 for a path that could only name an operation by accident
 * (not valid percent-encoding, or an operation's path in another letter case) and for a method
 * the operation's path is not served with.
 */
export function resolveRoute(contract: Contract, routes: OperationRoutes, req: Request): ResolvedRoute | undefined {
  if (!isDecodable(req.path))
    throw new ApiError("not_found", "No such resource: the path is not valid percent-encoding.");
  const route = routes.find(req.method, req.path);
  if (route) return route;
  if (contract.operations.isMiscased(req.path)) {
    throw new ApiError(
      "not_found",
      `No such endpoint: ${req.path}. Paths are case-sensitive; see GET /api/v1/ for the list.`,
    );
  }
  // A path the contract serves with other methods: no router after the edge may answer it
  // (an Express router would answer OPTIONS itself, with 200 and an Allow list).
  if (contract.operations.all.some((operation) => operation.servedPattern.test(req.path))) {
    throw new ApiError("not_found", "No such endpoint. See GET /api/v1/ for the list of endpoints.");
  }
  return undefined;
}

/** Finds the request's operation, once; every later step reads it with routeOf. */
export function resolveOperation(contract: Contract, routes: OperationRoutes): RequestHandler {
  return function resolveRequestOperation(req: Request, res: Response, next: NextFunction): void {
    try {
      const route = resolveRoute(contract, routes, req);
      if (route) res.locals.route = route;
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** The route resolveOperation found for the request; undefined before it ran or for a path the contract does not know. */
export function routeOf(res: Response): ResolvedRoute | undefined {
  return res.locals.route;
}

/** The request's operation (see routeOf). */
export function operationOf(res: Response): ContractOperation | undefined {
  return routeOf(res)?.context.operation;
}
