import { readFileSync } from "node:fs";
import yaml from "js-yaml";

/** Where openapi.yaml mounts: public paths under /api/v1, operator paths under /admin/v1. */
export const API_BASE = "/api/v1";
export const ADMIN_BASE = "/admin/v1";

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

export interface ContractOperation {
  method: string;
  /** Path as written in openapi.yaml, e.g. `/streams/{id}`. */
  path: string;
  /** Path as served, e.g. `/api/v1/streams/{id}`. */
  fullPath: string;
  operationId: string;
  summary: string;
  /** null for public operations (GET /, GET /creators). */
  scope: string | null;
  admin: boolean;
  matcher: RegExp;
  /** The response statuses the contract documents for it. */
  statuses: ReadonlySet<number>;
  /** `x-field-error-codes`: the code an invalid body field gets instead of invalid_fields. */
  fieldErrorCodes: ReadonlyMap<string, string>;
}

type Json = Record<string, any>;

let cached: Json | undefined;

/** The parsed contract, read once per process. */
export function contractDocument(): Json {
  cached ??= yaml.load(readFileSync(new URL("../../openapi.yaml", import.meta.url), "utf8")) as Json;
  return cached;
}

function isAdminPath(item: Json): boolean {
  return (item.servers ?? []).some((server: Json) => String(server.url).includes(ADMIN_BASE));
}

function matcherFor(fullPath: string): RegExp {
  const pattern = fullPath
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith("{") ? "[^/]+" : part.replace(/[.*+?^$()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${pattern.replace(/\/$/, "")}/?$`);
}

/** Every operation of the contract with the scope it requires (`x-required-scope`). */
export function contractOperations(doc: Json = contractDocument()): ContractOperation[] {
  const operations: ContractOperation[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    const admin = isAdminPath(item);
    const fullPath = (admin ? ADMIN_BASE : API_BASE) + path;
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      operations.push({
        method: method.toUpperCase(),
        path,
        fullPath,
        operationId: operation.operationId,
        summary: operation.summary ?? operation.operationId,
        scope: operation["x-required-scope"] ?? null,
        admin,
        matcher: matcherFor(fullPath),
        statuses: new Set(Object.keys(operation.responses ?? {}).map(Number)),
        fieldErrorCodes: new Map(Object.entries<string>(operation["x-field-error-codes"] ?? {})),
      });
    }
  }
  return operations;
}

export function findOperation(operations: readonly ContractOperation[], method: string, path: string): ContractOperation | undefined {
  return operations.find((operation) => operation.method === method && operation.matcher.test(path));
}

/**
 * True when the path names an operation only if letter case is ignored (`/API/v1/Streams`).
 * Express matches routes case-insensitively, so such a path would reach a route the guard never
 * checked; the guard answers it 404 instead.
 */
export function isMiscasedOperationPath(operations: readonly ContractOperation[], path: string): boolean {
  return operations.some((operation) => new RegExp(operation.matcher.source, "i").test(path) && !operation.matcher.test(path));
}

/**
 * The contract as express-openapi-validator sees it: one server at the root and every path under
 * its served prefix, so public and operator operations are validated by one middleware.
 */
export function validatorDocument(doc: Json = contractDocument()): Json {
  const copy = structuredClone(doc);
  const paths: Json = {};
  for (const [path, item] of Object.entries<Json>(copy.paths)) {
    const prefix = isAdminPath(item) ? ADMIN_BASE : API_BASE;
    delete item.servers;
    paths[prefix + path] = item;
  }
  copy.paths = paths;
  copy.servers = [{ url: "/" }];
  delete copy.webhooks;
  return copy;
}
