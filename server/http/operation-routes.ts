import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { Contract } from "../../contract/contract.ts";
import type { ContractOperation } from "../../contract/operations.ts";
import { ApiError } from "../domain/errors.ts";
import { type OperationValidation, operationValidation } from "./contract-validation.ts";
import type { AnyOperationHandler, OperationHandlers } from "./dispatch.ts";
import type { OperationRule, OperationRules } from "./operation-rules.ts";

/**
 * Everything the server knows about one operation of openapi.yaml, put together once at start-up:
 * the contract's entry (scope, documented statuses, field error codes), its rule (operation-rules.ts),
 * the validators compiled from its schemas, and its handler. A request finds its route once
 * (resolveOperation); the guard, the body parser, validation, dispatch, the error handler and the
 * request log all read it from there (routeOf).
 */
export interface OperationRoute {
  readonly operation: ContractOperation;
  /** What runs before validation, beyond the schemas (none for most operations). */
  readonly rule: OperationRule;
  readonly validation: OperationValidation;
  /** Absent where the app answers in its own way (the mock forwards to Prism). */
  readonly handler: AnyOperationHandler | undefined;
}

/** The request's operation route, with the path parameters it was sent with (decoded). */
export interface ResolvedRoute extends OperationRoute {
  readonly params: Readonly<Record<string, string>>;
}

export interface OperationRoutes {
  /** The route a request names (path as served, e.g. `/api/v1/streams/abc`), if any. */
  find(method: string, path: string): ResolvedRoute | undefined;
}

export interface RouteParts {
  /** The operations' rules (operation-rules.ts). */
  rules?: OperationRules;
  /** Every operation's handler (app.ts); none for the mock. */
  handlers?: OperationHandlers;
}

/** The routes of every operation of the contract, and how a request finds its own. */
export function operationRoutes(contract: Contract, { rules = {}, handlers }: RouteParts = {}): OperationRoutes {
  const ruleOf = byServedId(contract, "a rule", rules);
  const handlerOf = byServedId(contract, "a handler", handlers ?? {});
  const unanswered = contract.operations.all.filter((operation) => !handlerOf.has(operation.operationId));
  if (handlers && unanswered.length > 0)
    throw new Error(`no handler for ${unanswered.map((operation) => operation.operationId).join(", ")}: ${REBUILD}`);
  const routes = new Map<ContractOperation, OperationRoute>();
  for (const operation of contract.operations.all) {
    routes.set(operation, {
      operation,
      rule: ruleOf.get(operation.operationId) ?? NO_RULE,
      validation: operationValidation(operation),
      handler: handlerOf.get(operation.operationId),
    });
  }
  const noParams: Readonly<Record<string, string>> = Object.freeze({});
  return {
    find(method, path) {
      const operation = contract.operations.find(method, path);
      const route = operation && routes.get(operation);
      if (!operation || !route) return undefined;
      const names = operation.pathParameterNames;
      if (names.length === 0) return { ...route, params: noParams };
      // The pattern that matched, read for its groups: one compiler, one trailing-slash rule.
      const values = operation.servedPattern.exec(path)?.slice(1) ?? [];
      const params: Record<string, string> = {};
      names.forEach((name, index) => {
        params[name] = decodeURIComponent(values[index] ?? "");
      });
      return { ...route, params };
    },
  };
}

const NO_RULE: OperationRule = Object.freeze({});

const REBUILD =
  "the contract as built (build/contract/server.json) and its types (generated/api.ts) name different operations; run npm run generate and npm run build";

/**
 * `parts` by operationId, each id checked against the operations the loaded contract serves: the
 * types (`ServedOperationId`) are generated from openapi.yaml, the server serves the contract as
 * built, so a stale build or stale types would otherwise leave a handler or rule on no operation.
 */
function byServedId<Part>(
  contract: Contract,
  what: string,
  parts: Readonly<Record<string, Part | undefined>>,
): ReadonlyMap<string, Part> {
  const served = new Set(contract.operations.all.map((operation) => operation.operationId));
  const byId = new Map<string, Part>();
  for (const [operationId, part] of Object.entries(parts)) {
    if (part === undefined) continue;
    if (!served.has(operationId))
      throw new Error(`${what} for ${operationId}, which the contract does not serve: ${REBUILD}`);
    byId.set(operationId, part);
  }
  return byId;
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

/** Finds the request's operation route, once; every later step reads it with routeOf. */
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
  return routeOf(res)?.operation;
}
