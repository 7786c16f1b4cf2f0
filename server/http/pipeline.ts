import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { ApiError } from "../errors.ts";
import type { Contract } from "../../contract/contract.ts";
import { ADMIN_BASE, type ContractOperation } from "../../contract/operations.ts";
import { clampListQuery, firstWebhookId, normalizeRequest, requireLiveDuration } from "./normalize.ts";
import { docsRoutes } from "./routes/public.ts";
import type { ServedServer } from "./served-docs.ts";
import { contractValidator } from "./validator.ts";
import { newRequestId } from "./request-id.ts";

const DOCS_BASE = "/docs";

/** An incoming `X-Request-Id` kept as the request's id: short, and safe to log and echo. */
const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

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
  const incoming = req.headers["x-request-id"];
  const id = typeof incoming === "string" && WELL_FORMED_REQUEST_ID.test(incoming) ? incoming : newRequestId();
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
  /** 401 → 429 → 403 → 402 for the public API; sets `res.locals.caller`. */
  apiGuard: RequestHandler;
}

/** The largest JSON body accepted (a 50,000-character script fits many times over). */
const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * A body announced larger than the limit is refused at once, and the connection closed after the
 * answer. express.json refuses it too, but only after reading it all (to keep the connection
 * usable), so a body that never arrives held the connection until the request time-out.
 *
 * Only an operation that takes a body has one read: anywhere else (a GET, an operation without
 * a request body, a path no operation has) a body sent anyway is ignored, so it cannot turn the
 * answer into a 400 the operation does not document.
 */
const parseJson = express.json({ limit: BODY_LIMIT_BYTES });

function jsonBody(req: Request, res: Response, next: NextFunction): void {
  if (Number(req.headers["content-length"]) > BODY_LIMIT_BYTES) {
    res.set("Connection", "close");
    return next(new ApiError("invalid_fields", `The request body is too large: at most ${BODY_LIMIT_BYTES} bytes.`));
  }
  if (!(res.locals.operation as ContractOperation | undefined)?.requestSchema) return next();
  parseJson(req, res, next);
}

/**
 * Rules of single operations that run before validation, by the operation the guard resolved:
 * one layer for the three (not one route layer each, which every request would pass).
 */
function operationRules(contract: Contract): RequestHandler {
  const rules: ReadonlyMap<string, RequestHandler> = new Map([
    ["listStreams", clampListQuery(contract.limits)],
    ["createStream", requireLiveDuration],
    ["deleteWebhook", firstWebhookId],
  ]);
  return function applyOperationRule(req: Request, res: Response, next: NextFunction): void {
    const rule = rules.get((res.locals.operation as ContractOperation | undefined)?.operationId ?? "");
    if (rule) return void rule(req, res, next);
    next();
  };
}

/**
 * Everything a request meets before an endpoint's own rules, in the documented check order:
 * its request id (first, so that every answer carries it), normalisation, the docs, the guards
 * (401 → 429 → 403 → 402, before the body is parsed), the body, the GET /streams and DELETE
 * /webhooks query rules, the live-key duration rule, then validation against openapi.yaml (400;
 * responses are validated too). The server and the mock both mount it, so they cannot answer the
 * same bad request differently.
 */
export function mountContractEdge(app: Express, edge: ContractEdge): void {
  app.disable("x-powered-by");
  app.set("trust proxy", false);
  app.set("etag", false);
  // One layer for both: every layer costs each request a little (docs/performance.md).
  app.use(function identifyAndNormalize(req, res, next) {
    setRequestId(req, res);
    normalizeRequest(req, res, next);
  });
  // Mounted at its prefix, so API requests skip it on one path test.
  app.use(DOCS_BASE, docsRoutes(edge.docsDir, edge.servedAs));
  app.use(ADMIN_BASE, edge.operatorGuard);
  app.use(edge.apiGuard);
  app.use(jsonBody);
  app.use(operationRules(edge.contract));
  app.use(contractValidator(edge.contract));
}
