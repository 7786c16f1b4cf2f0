/**
 * The contract's operations, indexed once: what every layer (the server's guard, validator and
 * error handler, the request log, the mock, the conformance suite, the scripts) reads about an
 * operation, instead of each walking openapi.yaml itself.
 */
import type { Json } from "./indexed.ts";

/**
 * Where openapi.yaml mounts: public paths under /api/v1; the `x-internal` paths of the operator
 * API under /admin/v1 and those of the dashboard's API under /dashboard/api/v1.
 */
export const API_BASE = "/api/v1";
export const ADMIN_BASE = "/admin/v1";
export const DASHBOARD_API_BASE = "/dashboard/api/v1";

// In the order the index has always listed them (the discovery document follows it).
const METHODS = ["get", "post", "put", "patch", "delete", "head", "options", "trace"] as const;

/** The dashboard's roles, least first: `x-required-role` names the least one an operation needs. */
export const DASHBOARD_ROLES = ["viewer", "developer", "owner"] as const;
export type DashboardRole = (typeof DASHBOARD_ROLES)[number];

export interface ContractOperation {
  readonly operationId: string;
  /** Upper case, e.g. `GET`. */
  readonly method: string;
  /** As written in openapi.yaml, e.g. `/streams/{id}`. */
  readonly path: string;
  /** As served, e.g. `/api/v1/streams/{id}`. */
  readonly servedPath: string;
  readonly summary: string;
  readonly tags: readonly string[];
  /** `x-required-scope`; null for operations without a key (GET /, GET /creators) and the operator API. */
  readonly scope: string | null;
  /** The operator API (`x-internal`), served under /admin/v1. */
  readonly admin: boolean;
  /** The dashboard's API (`x-internal`, session cookie), served under /dashboard/api/v1. */
  readonly dashboard: boolean;
  /** Whether the operation takes the API key (its `security` not emptied). */
  readonly secured: boolean;
  /** Dashboard API: it needs a signed-in member (every `security` requirement names `dashboardSession`). */
  readonly sessionRequired: boolean;
  /** Dashboard API: it needs the CSRF token and Origin (every `security` requirement names `dashboardCsrf`). */
  readonly csrfRequired: boolean;
  /** `x-required-role`: the least role a signed-in dashboard operation needs; null elsewhere. */
  readonly role: DashboardRole | null;
  /** The response statuses the contract documents for it. */
  readonly statuses: ReadonlySet<number>;
  /** Its documented responses (dereferenced), by status. */
  readonly responses: ReadonlyMap<number, Json>;
  /**
   * `x-field-error-codes`: the code an invalid body field or parameter gets instead of
   * invalid_fields (`not_found` for a path id longer than any id).
   */
  readonly fieldErrorCodes: ReadonlyMap<string, string>;
  /** The path item's parameters, then the operation's (dereferenced). */
  readonly parameters: readonly Json[];
  /** The `application/json` request body schema (dereferenced), if any. */
  readonly requestSchema: Json | null;
  /** Its request body is `required` (a request without one is 400 missing_fields). */
  readonly bodyRequired: boolean;
  /** Matches the contract path exactly (`/streams/abc`, not `/streams/abc/`). */
  readonly pathPattern: RegExp;
  /**
   * Matches the served path exactly; only a base's own path takes a trailing slash (`/api/v1` and
   * `/api/v1/` are GET /), as the server's one rule has it (server/http/normalize.ts). Its groups
   * are the path parameters, in the order of `pathParameterNames`.
   */
  readonly servedPattern: RegExp;
  /** The path's template names (`id` of `/streams/{id}`), in order. */
  readonly pathParameterNames: readonly string[];
}

export interface OperationIndex {
  /** In the contract's order. */
  readonly all: readonly ContractOperation[];
  /** The operation named `operationId`; throws for one the contract does not have. */
  byId(operationId: string): ContractOperation;
  /** The operation a request names (`path` as served, e.g. `/api/v1/streams/abc`), if any. */
  find(method: string, path: string): ContractOperation | undefined;
  /**
   * True when the path names an operation only if letter case is ignored (`/API/v1/Streams`).
   * Resolution (server/http/operation-routes.ts, resolveRoute) answers it 404, saying paths are
   * case-sensitive: Express matches a layer mounted at a prefix regardless of case, so such a path
   * would otherwise reach layers after the edge that expect a resolved operation (the mock's).
   */
  isMiscased(path: string): boolean;
}

/**
 * `/streams/{id}` → a pattern with a group `([^/]+)` for each template, the rest literal: the one
 * path compiler, for matching a request and for reading its path parameters.
 */
function templatePattern(path: string, { trailingSlash }: { trailingSlash: boolean }): string {
  const source = path
    .split(/\{[^}]+\}/)
    .map((literal) => literal.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))
    .join("([^/]+)");
  return trailingSlash ? `^${source.replace(/\/$/, "")}/?$` : `^${source}$`;
}

type Surface = "api" | "admin" | "dashboard";

const BASES: Record<Surface, string> = { api: API_BASE, admin: ADMIN_BASE, dashboard: DASHBOARD_API_BASE };

/**
 * Where a path item is served, from its `servers`: the operator API's paths name a server under
 * /admin/v1, the dashboard API's one under /dashboard/api/v1, and both are `x-internal`; a path
 * marked one way and served the other is refused, since the guard would then apply the wrong
 * rules to it.
 */
function surfaceOf(path: string, item: Json): Surface {
  const internal = item["x-internal"] === true;
  const urls: string[] = (item.servers ?? []).map((server: Json) => String(server.url));
  const surface: Surface = urls.some((url) => url.includes(DASHBOARD_API_BASE))
    ? "dashboard"
    : urls.some((url) => url.includes(ADMIN_BASE))
      ? "admin"
      : "api";
  if (internal !== (surface !== "api")) {
    throw new Error(
      `path ${path} is ${internal ? "" : "not "}x-internal but ${surface === "api" ? "does not name" : "names"} a server under ${ADMIN_BASE} or ${DASHBOARD_API_BASE}`,
    );
  }
  return surface;
}

const CHANGING_METHODS = new Set(["post", "put", "patch", "delete"]);

/**
 * A dashboard operation's access rules, from its `security` and `x-required-role`. Refuses a
 * contract that would leave one open by omission: an operation with the session but no role (a
 * new operation does not start open to viewers), a changing one without the CSRF token, or a
 * role anywhere it means nothing.
 */
function accessOf(
  where: string,
  method: string,
  operation: Json,
  surface: Surface,
): Pick<ContractOperation, "sessionRequired" | "csrfRequired" | "role"> {
  const requirements: Json[] = Array.isArray(operation.security) ? operation.security : [];
  const everyNames = (scheme: string) => requirements.length > 0 && requirements.every((r) => scheme in r);
  const role = operation["x-required-role"];
  if (surface !== "dashboard") {
    if (role !== undefined) throw new Error(`${where} has x-required-role outside the dashboard API`);
    return { sessionRequired: false, csrfRequired: false, role: null };
  }
  const sessionRequired = everyNames("dashboardSession");
  const csrfRequired = everyNames("dashboardCsrf");
  if (CHANGING_METHODS.has(method) && !csrfRequired)
    throw new Error(`${where} changes something, so its security must name dashboardCsrf`);
  if (!sessionRequired) {
    if (role !== undefined) throw new Error(`${where} is open without a session, so it takes no x-required-role`);
    return { sessionRequired, csrfRequired, role: null };
  }
  if (!DASHBOARD_ROLES.includes(role))
    throw new Error(`${where} takes the session but its x-required-role is not one of ${DASHBOARD_ROLES.join(", ")}`);
  return { sessionRequired, csrfRequired, role };
}

function indexEntry(path: string, item: Json, method: string, operation: Json, surface: Surface): ContractOperation {
  const operationId = operation.operationId;
  if (typeof operationId !== "string") throw new Error(`${method.toUpperCase()} ${path} has no operationId`);
  const servedPath = BASES[surface] + path;
  const responses = new Map(
    Object.entries<Json>(operation.responses ?? {}).map(([status, response]) => [Number(status), response]),
  );
  return {
    operationId,
    method: method.toUpperCase(),
    path,
    servedPath,
    summary: operation.summary ?? operationId,
    tags: operation.tags ?? [],
    scope: operation["x-required-scope"] ?? null,
    admin: surface === "admin",
    dashboard: surface === "dashboard",
    secured: !(Array.isArray(operation.security) && operation.security.length === 0),
    ...accessOf(`${method.toUpperCase()} ${path} (${operationId})`, method, operation, surface),
    statuses: new Set(responses.keys()),
    responses,
    fieldErrorCodes: new Map(Object.entries<string>(operation["x-field-error-codes"] ?? {})),
    parameters: [...(item.parameters ?? []), ...(operation.parameters ?? [])],
    requestSchema: operation.requestBody?.content?.["application/json"]?.schema ?? null,
    bodyRequired: operation.requestBody?.required === true,
    pathPattern: new RegExp(templatePattern(path, { trailingSlash: false })),
    servedPattern: new RegExp(templatePattern(servedPath, { trailingSlash: path === "/" })),
    pathParameterNames: [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!),
  };
}

/** The index of a dereferenced document's operations (`paths`; webhooks are sent, not served). */
export function indexOperations(dereferenced: Json): OperationIndex {
  const all: ContractOperation[] = [];
  for (const [path, item] of Object.entries<Json>(dereferenced.paths ?? {})) {
    const surface = surfaceOf(path, item);
    for (const method of METHODS) {
      if (item[method]) all.push(indexEntry(path, item, method, item[method], surface));
    }
  }
  const byId = new Map(all.map((operation) => [operation.operationId, operation]));
  if (byId.size !== all.length)
    throw new Error(
      `an operationId is used twice: ${all
        .map((operation) => operation.operationId)
        .filter((id, index, ids) => ids.indexOf(id) !== index)
        .join(", ")}`,
    );
  // By method, so a request is matched against a handful of patterns rather than all of them.
  const byMethod = new Map<string, ContractOperation[]>();
  for (const operation of all) byMethod.set(operation.method, [...(byMethod.get(operation.method) ?? []), operation]);
  const miscased = all.map((operation) => new RegExp(operation.servedPattern.source, "i"));
  return {
    all,
    byId(operationId) {
      const operation = byId.get(operationId);
      if (!operation) throw new Error(`the contract has no operation ${operationId}`);
      return operation;
    },
    find(method, path) {
      return byMethod.get(method)?.find((operation) => operation.servedPattern.test(path));
    },
    isMiscased(path) {
      return all.some((operation, index) => miscased[index]!.test(path) && !operation.servedPattern.test(path));
    },
  };
}
