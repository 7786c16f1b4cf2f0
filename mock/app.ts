/**
 * The mock as partners reach it: Prism's answers behind the server's own request handling. The
 * server's contract edge (server/http/pipeline.ts) decides everything a stateless mock can decide
 * exactly as the server does: the `/api/v1` base path, 404 for unknown paths and trailing slashes,
 * the 401 body for a missing or malformed key, the operator API's absence, malformed JSON,
 * validation codes, `limit`/`offset` clamping, no CORS. Valid requests go on to Prism, which
 * answers the documented examples (static) or generated data (dynamic); `shapeAnswer` makes that
 * data agree with the request and with itself.
 */
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from "express";
import type { Contract } from "../contract/contract.ts";
import { API_BASE, type ContractOperation, type OperationIndex } from "../contract/operations.ts";
import { isUuid } from "../server/domain/ids.ts";
import { parseApiKey } from "../server/domain/keys.ts";
import { webhookUrlProblem } from "../server/domain/webhook-url.ts";
import { ApiError } from "../server/errors.ts";
import { errorHandler, noSuchEndpoint } from "../server/http/error-handler.ts";
import { requestedOperation } from "../server/http/guard.ts";
import { listQueryOf } from "../server/http/normalize.ts";
import { mountContractEdge } from "../server/http/pipeline.ts";
import { operatorGuard } from "../server/http/routes/operator.ts";
import type { Caller } from "../server/services/auth.ts";
import { wellFormedBearerKey } from "../server/services/auth.ts";
import { type AnswerContext, shapeAnswer } from "./shape-answer.ts";

export interface MockAppOptions {
  /** openapi.yaml as loaded (`await loadContract()`), the document Prism mocks. */
  contract: Contract;
  /** Where Prism listens, e.g. `http://127.0.0.1:41234` (it serves the contract's paths bare). */
  prismUrl: string;
  /** This mock's own origin, named by the contract it serves at /docs/openapi.yaml. */
  publicUrl: string;
  docsDir: string;
  dynamic: boolean;
  now?: () => Date;
}

export function createMockApp({ contract, prismUrl, publicUrl, docsDir, dynamic, now = () => new Date() }: MockAppOptions): Express {
  const { operations } = contract;
  const app = express();
  mountContractEdge(app, {
    contract,
    docsDir,
    servedAs: { url: `${publicUrl}${API_BASE}`, description: `This mock (${dynamic ? "dynamic: generated data" : "static: the documented examples"})` },
    // As on a server started without ADMIN_TOKEN: the operator API does not exist here.
    operatorGuard: operatorGuard(undefined),
    apiGuard: mockGuard(operations),
  });
  app.use(API_BASE, statelessRules(listedCreatorIds(operations)));
  app.use(API_BASE, forwardToPrism({ prismUrl, publicUrl, dynamic, now, defaultPeriod: contract.limits.periods.default }));
  app.use(noSuchEndpoint);
  app.use(errorHandler({ operations }));
  return app;
}

/**
 * The guard's 401, without keys to look up: any well-formed `svc_test_`/`svc_live_` key has every
 * scope, and no rate limit or plan applies. The key's environment still decides the live-key rules
 * (`duration_minutes` required, the live-key answer of POST /streams).
 */
function mockGuard(operations: OperationIndex): RequestHandler {
  return function guardMock(req, res, next) {
    try {
      const operation = requestedOperation(operations, req);
      if (!operation || operation.admin || operation.dashboard) return next();
      res.locals.operation = operation;
      if (operation.scope === null) return next();
      const key = wellFormedBearerKey(req.headers.authorization);
      if (!key) throw new ApiError("unauthorized");
      res.locals.caller = { mode: parseApiKey(key) } as Caller;
      next();
    } catch (error) {
      next(error);
    }
  };
}

/**
 * The endpoint rules that need no state, in the server's order: an id that is not a UUID names no
 * stream (404), `creator_id` must be a creator the mock lists (400 invalid_creator), and a webhook
 * URL must be HTTPS on a public host (400 invalid_url, with the server's own message).
 */
function statelessRules(creatorIds: ReadonlySet<string>): express.Router {
  const router = express.Router();
  const requireUuid: RequestHandler = (req, _res, next) => {
    next(isUuid(req.params.id as string) ? undefined : new ApiError("not_found", `No stream with id ${req.params.id}.`));
  };
  router.get("/streams/:id", requireUuid);
  router.delete("/streams/:id", requireUuid);
  router.post("/streams", (req, _res, next) => {
    const creatorId = (req.body as { creator_id: string }).creator_id;
    next(creatorIds.has(creatorId) ? undefined : new ApiError("invalid_creator"));
  });
  router.post("/webhooks", (req, _res, next) => {
    const problem = webhookUrlProblem((req.body as { url: string }).url);
    next(problem ? new ApiError("invalid_url", problem) : undefined);
  });
  return router;
}

/** The creators of GET /creators' documented example: the ones the mock lists. */
function listedCreatorIds(operations: OperationIndex): Set<string> {
  const examples = operations.byId("listCreators").responses.get(200)?.content["application/json"].examples;
  return new Set(Object.values<any>(examples).flatMap((example) => example.value.creators.map((creator: { id: string }) => creator.id)));
}

/** Prism's headers a partner may rely on; its CORS headers are not among them (no CORS, as on the server). */
const FORWARDED_HEADERS = ["cache-control"];

function forwardToPrism({ prismUrl, publicUrl, dynamic, now, defaultPeriod }: { prismUrl: string; publicUrl: string; dynamic: boolean; now: () => Date; defaultPeriod: string }): RequestHandler {
  return async function forward(req: Request, res: Response, next: NextFunction) {
    const operation = res.locals.operation as ContractOperation | undefined;
    if (!operation) return next();
    const caller = res.locals.caller as Caller | undefined;
    try {
      const headers: Record<string, string> = { accept: "application/json" };
      if (req.headers.authorization) headers.authorization = req.headers.authorization;
      const partnerPrefer = req.get("prefer");
      const prefer = preferFor(operation, caller, partnerPrefer);
      if (prefer) headers.prefer = prefer;
      const hasBody = req.method === "POST";
      if (hasBody) headers["content-type"] = "application/json";
      // req.url is relative to the mount point (/api/v1) and carries the normalised query.
      const answer = await fetch(prismUrl + req.url, { method: req.method, headers, body: hasBody ? JSON.stringify(req.body) : null });
      const text = await answer.text();
      for (const name of FORWARDED_HEADERS) {
        const value = answer.headers.get(name);
        if (value !== null) res.set(name, value);
      }
      const context: AnswerContext = {
        operationId: operation.operationId,
        pathId: operation.path.includes("{") ? decodeURIComponent(req.path.split("/").pop()!) : undefined,
        // GET /streams: the query as clampListQuery settled it (defaults for absent parameters).
        query: operation.operationId === "listStreams" ? { ...listQueryOf(res) } : (req.query as Record<string, unknown>),
        defaultPeriod,
        body: req.body,
        mode: caller?.mode ?? null,
        dynamic,
        publicUrl,
        explicitExample: partnerPrefer !== undefined,
        now: now(),
      };
      if (!operation.statuses.has(answer.status)) {
        // Only reachable by asking Prism for a status the contract does not document (`Prefer:
        // code=418`): its own problem body goes back as it came, not dressed up as the API's.
        res.status(answer.status).type(answer.headers.get("content-type") ?? "application/json").send(text);
        return;
      }
      res.status(answer.status).json(shapeAnswer(JSON.parse(text), answer.status, context));
    } catch (error) {
      next(error);
    }
  };
}

/**
 * What to ask Prism for. A partner's own `Prefer` wins. Otherwise a test key gets the test-key
 * example of POST /streams (`status: live`, `test: true`), as the server answers a test key, and
 * the creators are always the documented ones, in dynamic mode too: they are the ids POST /streams
 * accepts (`invalid_creator` otherwise), so a creator taken from the list can always start a stream.
 */
function preferFor(operation: ContractOperation, caller: Caller | undefined, prefer: string | undefined): string | undefined {
  if (prefer !== undefined) return prefer;
  if (operation.operationId === "createStream" && caller?.mode === "test") return "example=test";
  if (operation.operationId === "listCreators") return "dynamic=false";
  return undefined;
}
