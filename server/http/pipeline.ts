import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { ApiError } from "../domain/errors.ts";
import type { Contract } from "../../contract/contract.ts";
import { ADMIN_BASE, API_BASE, DASHBOARD_API_BASE } from "../../contract/operations.ts";
import { DASHBOARD_BASE, dashboardApp, isDashboardApi } from "./dashboard-app.ts";
import { announcesBody, boundedBody, LARGEST_BODY_BYTES } from "./body-limit.ts";
import type { TrustProxy } from "../config.ts";
import { trustProxies } from "./client-address.ts";
import { normalizeRequest } from "./normalize.ts";
import { operationRules } from "./operation-rules.ts";
import { docsRoutes } from "./routes/public.ts";
import type { ServedServer } from "./served-docs.ts";
import type { OperationHandlers } from "./dispatch.ts";
import { operationOf, operationRoutes, resolveOperation } from "./operation-routes.ts";
import { validateRequest } from "./validator.ts";
import { requestIdFor } from "./request-id.ts";

const DOCS_BASE = "/docs";

/**
 * Names every request: a well-formed incoming `X-Request-Id` (a proxy's or the client's own) is
 * kept, anything else gets a new `req_…` id. Sent back as `Request-Id` on every response (API,
 * docs, operator API, 404s) and kept in `res.locals.requestId` for the logs.
 */
export function assignRequestId(req: Request, res: Response, next: NextFunction): void {
  setRequestId(req, res);
  next();
}

function setRequestId(req: Request, res: Response): void {
  const id = requestIdFor(req.headers["x-request-id"]);
  res.locals.requestId = id;
  res.setHeader("Request-Id", id);
}

export interface ContractEdge {
  /** The loaded contract (openapi.yaml): its operations, limits and the document the validator reads. */
  contract: Contract;
  docsDir: string;
  /** The server the served contract and docs page name. */
  servedAs: ServedServer;
  /** Guards /admin/v1. */
  operatorGuard: RequestHandler;
  /** Guards /dashboard/api/v1 (session, CSRF, role); absent in the mock, which serves no dashboard. */
  dashboardGuard?: RequestHandler;
  /** The dashboard's built app, served at /dashboard; absent in the mock. */
  dashboardDir?: string;
  /** 401 → 429 → 403 → 402 for the public API; sets `res.locals.caller`. */
  apiGuard: RequestHandler;
  /** Every operation's handler, run by dispatchOperation (app.ts); none for the mock, which forwards to Prism. */
  handlers?: OperationHandlers;
  /** TRUST_PROXY: whose X-Forwarded-For and X-Forwarded-Proto are believed (client-address.ts); none by default. */
  trustProxy?: TrustProxy;
}

/**
 * The JSON body parser; the bytes read are kept beside the parsed body (`rawBody`) for a request
 * the request log records, which stores the body as sent rather than as validation filled it in.
 */
const parseJson = boundedBody(
  express.json({
    limit: LARGEST_BODY_BYTES,
    verify: (_req, res, bytes) => {
      // Boundary: body-parser types its hook with Node's response; Express passes it its own.
      // biome-ignore lint/nursery/noUnsafeTypeAssertion: the response is Express's (see above)
      const { locals } = res as Response;
      if (locals.loggedKey) locals.rawBody = bytes;
    },
  }),
  LARGEST_BODY_BYTES,
);

/**
 * The body, read only for an operation that takes one (as resolved, resolveOperation), and refused at
 * once when over the limit (boundedBody). An operation with a required body sent none (no
 * Content-Length and no Transfer-Encoding, as `curl -X POST` without `-d` or HTTP/1.0 sends, or
 * `Content-Length: 0`) is 400 `missing_fields` here: the validator fills a missing body with its
 * schema's `default`, or passes it when the schema requires no field, so the handler would meet
 * `undefined` (and an empty PATCH would be a no-op 200). A request refused here stores and burns
 * no Idempotency-Key: that is claimed after validation.
 *
 * Any other request's body is not read, so it cannot change the answer: malformed JSON sent with
 * a GET is no 400 the operation does not document (the transport closes the connection after
 * answering one announced over the limit, rather than reading it off).
 */
function jsonBody(req: Request, res: Response, next: NextFunction): void {
  const operation = operationOf(res);
  if (!operation?.requestSchema) return next();
  if (!announcesBody(req) || Number(req.headers["content-length"]) === 0) {
    if (!operation.bodyRequired) return next();
    return next(
      new ApiError(
        "missing_fields",
        "The request has no body: send the JSON object, with Content-Type: application/json.",
      ),
    );
  }
  parseJson(req, res, next);
}

/**
 * The API offers no conditional requests: no answer carries an ETag or Last-Modified, so a client
 * holds nothing to revalidate, and `If-None-Match`, `If-Modified-Since` and the other
 * preconditions are ignored. Express would otherwise answer `If-None-Match: *` to any 200 with an
 * empty 304 (the probes' included), a body the client never had. Set on the app's request
 * prototype, so it holds for every route of the app, mounted before this or after.
 */
function ignoreConditionalRequests(app: Express): void {
  app.set("etag", false);
  Object.defineProperty(app.request, "fresh", { configurable: true, enumerable: true, get: () => false });
}

/** The public, operator and dashboard APIs' paths: every answer under them is `no-store`. */
function isApiPath(path: string): boolean {
  return [API_BASE, ADMIN_BASE, DASHBOARD_API_BASE].some((base) => path === base || path.startsWith(`${base}/`));
}

/**
 * Everything a request meets before an endpoint's own rules, in the documented check order:
 * its request id (first, so that every answer carries it), normalisation, the docs, the
 * operator guard, the one resolution of its operation (operation-routes.ts), the API guard
 * (401 → 429 → 403 → 402, before the body is parsed), the body, then the operation's rule
 * (operation-rules.ts: list clamping, first webhook id, live-key duration) and validation against
 * openapi.yaml (400; responses are validated too). The server and the mock both mount it, so they cannot answer the
 * same bad request differently.
 */
export function mountContractEdge(app: Express, edge: ContractEdge): void {
  app.disable("x-powered-by");
  trustProxies(app, edge.trustProxy ?? false);
  ignoreConditionalRequests(app);
  // One layer for both: every layer costs each request a little (docs/performance.md).
  app.use(function identifyAndNormalize(req, res, next) {
    setRequestId(req, res);
    // No API answer is kept by a browser cache or a proxy, errors included: many carry secrets
    // (a new key, a webhook's signing secret, an invitation or reset link, a session's CSRF
    // token). GET /creators, a public catalogue, sets its own contract-stated max-age.
    if (isApiPath(req.path)) res.setHeader("Cache-Control", "no-store");
    normalizeRequest(req, res, next);
  });
  // Mounted at its prefix, so API requests skip it on one path test; GET only (HEAD is GET by
  // now), as a router would answer OPTIONS itself, in text/plain.
  const docs = docsRoutes(edge.docsDir, edge.servedAs);
  app.use(DOCS_BASE, (req, res, next) => (req.method === "GET" ? docs(req, res, next) : next()));
  if (edge.dashboardDir) {
    const dashboard = dashboardApp(edge.dashboardDir);
    app.use(DASHBOARD_BASE, (req, res, next) =>
      req.method === "GET" && !isDashboardApi(req) ? dashboard(req, res, next) : next(),
    );
  }
  app.use(ADMIN_BASE, edge.operatorGuard);
  const routes = operationRoutes(edge.contract, {
    rules: operationRules(edge.contract),
    ...(edge.handlers ? { handlers: edge.handlers } : {}),
  });
  app.use(resolveOperation(edge.contract, routes));
  app.use(edge.apiGuard);
  if (edge.dashboardGuard) app.use(DASHBOARD_API_BASE, edge.dashboardGuard);
  app.use(jsonBody);
  app.use(validateRequest);
}
