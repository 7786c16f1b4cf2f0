/**
 * The static mock as partners reach it (`npm run mock`; in the dynamic mock, the answers asked
 * for with `Prefer`): Prism's documented examples behind the server's own request handling. The
 * server's contract edge (server/http/pipeline.ts) decides everything a stateless mock can decide
 * exactly as the server does: the `/api/v1` base path, 404 for unknown paths and trailing
 * slashes, the 401 body for a missing or malformed key, the operator API's absence, malformed
 * JSON, validation codes, `limit`/`offset` clamping, no CORS. Valid requests go on to Prism (in
 * this process, prism-engine.ts), which answers the documented examples, or the one `Prefer`
 * chose (prefer.ts checks it); `shapeAnswer` makes an example agree with the request. Every
 * answer carries `X-Mock: static` (MOCK_HEADER): how a client (the partner CLI) tells the static
 * mock, which keeps no state, from the dynamic mock and the server.
 */
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from "express";
import type { Contract } from "../contract/contract.ts";
import { API_BASE, type ContractOperation, type OperationIndex } from "../contract/operations.ts";
import { isUuid } from "../server/domain/ids.ts";
import { parseApiKey } from "../server/domain/keys.ts";
import { webhookUrlProblem } from "../server/domain/webhook-url.ts";
import { ApiError } from "../server/domain/errors.ts";
import { errorHandler, noSuchEndpoint } from "../server/http/error-handler.ts";
import { operationOf } from "../server/http/operation-routes.ts";
import { mountContractEdge } from "../server/http/pipeline.ts";
import { operatorGuard } from "../server/http/routes/operator.ts";
import type { Vertical } from "../server/domain/types.ts";
import { verticalProblem } from "../server/domain/vertical.ts";
import type { Caller } from "../server/services/auth.ts";
import { wellFormedBearerKey } from "../server/services/auth.ts";
import { type Preference, preferenceFor } from "./prefer.ts";
import type { PrismChoice, PrismEngine } from "./prism-engine.ts";
import { type AnswerContext, shapeAnswer } from "./shape-answer.ts";

/**
 * The header on every answer of the mock: `static` (a documented example, this app) or `dynamic`
 * (the server's own answer, dynamic.ts); the server never sends it. Documented in README.md
 * (Mock server).
 */
export const MOCK_HEADER = "X-Mock";
/** The vertical of the brand the mock plays when `--vertical` does not say: the demo brand's. */
export const DEFAULT_MOCK_VERTICAL: Vertical = "live-commerce";

export interface MockAppOptions {
  /** openapi.yaml as loaded (`await loadContract()`), the document Prism mocks. */
  contract: Contract;
  /** Prism on the same contract, in this process (prism-engine.ts). */
  prism: PrismEngine;
  /** This mock's own origin, named by the contract it serves at /docs/openapi.yaml. */
  publicUrl: string;
  docsDir: string;
  /** The vertical of the brand the mock plays: POST /streams answers `vertical_mismatch` as that brand would. */
  vertical?: Vertical;
  now?: () => Date;
}

export function createMockApp({
  contract,
  prism,
  publicUrl,
  docsDir,
  vertical = DEFAULT_MOCK_VERTICAL,
  now = () => new Date(),
}: MockAppOptions): Express {
  const { operations } = contract;
  const app = express();
  app.use((_req, res, next) => {
    res.set(MOCK_HEADER, "static");
    next();
  });
  mountContractEdge(app, {
    contract,
    docsDir,
    servedAs: { url: `${publicUrl}${API_BASE}`, description: "This mock (static: the documented examples)" },
    // As on a server started without ADMIN_TOKEN: the operator API does not exist here.
    operatorGuard: operatorGuard(undefined),
    apiGuard: mockGuard(),
  });
  app.use(API_BASE, statelessRules(listedCreatorIds(operations), vertical));
  app.use(
    API_BASE,
    answerWithPrism({ prism, publicUrl, vertical, now, defaultPeriod: contract.limits.periods.default }),
  );
  app.use(noSuchEndpoint);
  app.use(errorHandler());
  return app;
}

/**
 * The guard's 401, without keys to look up: any well-formed `svc_test_`/`svc_live_` key has every
 * scope, and no rate limit or plan applies. The key's environment still decides the live-key rules
 * (`duration_minutes` required, the live-key answer of POST /streams).
 */
function mockGuard(): RequestHandler {
  return function guardMock(req, res, next) {
    try {
      const operation = operationOf(res);
      if (!operation || operation.admin || operation.dashboard) return next();
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
 * stream (404), a stream must fit the brand's vertical (403 vertical_mismatch), `creator_id` must be
 * a creator the mock lists (400 invalid_creator), and a webhook URL must be HTTPS on a public host
 * (400 invalid_url, with the server's own message).
 */
function statelessRules(creatorIds: ReadonlySet<string>, vertical: Vertical): express.Router {
  const router = express.Router();
  const requireUuid: RequestHandler = (req, _res, next) => {
    next(
      isUuid(req.params.id as string) ? undefined : new ApiError("not_found", `No stream with id ${req.params.id}.`),
    );
  };
  router.get("/streams/:id", requireUuid);
  router.delete("/streams/:id", requireUuid);
  router.post("/streams", (req, _res, next) => {
    const body = req.body as { creator_id: string; platform: string; vertical?: Vertical };
    const problem = verticalProblem(vertical, body);
    if (problem) return next(new ApiError("vertical_mismatch", problem));
    next(creatorIds.has(body.creator_id) ? undefined : new ApiError("invalid_creator"));
  });

  router.post("/webhooks", (req, _res, next) => {
    const problem = webhookUrlProblem((req.body as { url: string }).url);
    next(problem ? new ApiError("invalid_url", problem) : undefined);
  });
  return router;
}

/**
 * GET /webhooks/listen unless `Prefer` chose an answer: the mock has no events, so the stream it
 * opens stays silent but for a comment that says so, until the client goes (Prism cannot answer
 * `text/event-stream`, and would say 406).
 */
function silentListen(req: Request, res: Response): void {
  res.status(200).type("text/event-stream").set("cache-control", "no-cache");
  res.write(`: ${MOCK_LISTEN_NOTE}\n\n`);
  req.on("close", () => res.end());
}

/** What the static mock's listen stream says: it has no events to send. */
export const MOCK_LISTEN_NOTE =
  "this is the static mock: it keeps no state and sends no events; start the dynamic mock (npm run mock -- --dynamic) or the server (npm start) to receive test events";

/** The creators of GET /creators' documented example: the ones the mock lists. */
function listedCreatorIds(operations: OperationIndex): ReadonlySet<string> {
  const examples = operations.byId("listCreators").responses.get(200)?.content["application/json"].examples;
  return new Set(
    Object.values<any>(examples).flatMap((example) =>
      example.value.creators.map((creator: { id: string }) => creator.id),
    ),
  );
}

/** Prism's headers a partner may rely on; its CORS headers are not among them (no CORS, as on the server). */
const FORWARDED_HEADERS = ["cache-control"];

interface AnswerOptions {
  prism: PrismEngine;
  publicUrl: string;
  vertical: Vertical;
  now: () => Date;
  defaultPeriod: string;
}

function answerWithPrism({ prism, publicUrl, vertical, now, defaultPeriod }: AnswerOptions): RequestHandler {
  return async function answer(req: Request, res: Response, next: NextFunction) {
    const operation = operationOf(res);
    if (!operation) return next();
    const caller = res.locals.caller;
    try {
      const preference = checkedPreference(operation, req, res);
      if (!preference) return;
      const headers: Record<string, string> = { accept: "application/json" };
      if (req.headers.authorization) headers.authorization = req.headers.authorization;
      const hasBody = req.method === "POST";
      if (hasBody) headers["content-type"] = "application/json";
      // req.path is relative to the mount point (/api/v1); req.query is the validated query (as
      // the operation's rule settled it).
      const query = new URLSearchParams(
        Object.entries(req.query).map(([name, value]): [string, string] => [name, String(value)]),
      );
      const request = {
        method: req.method.toLowerCase(),
        path: req.path,
        query: queryOf(query),
        headers,
        body: hasBody ? req.body : undefined,
      };
      const { explicit, ...choice } = preference;
      if (operation.operationId === "listenTestEvents" && !explicit) return silentListen(req, res);
      const answer = await prism.answer(
        request,
        explicit ? choice : { ...choice, ...defaultChoice(operation, caller) },
      );
      for (const [name, value] of Object.entries(answer.headers)) {
        if (FORWARDED_HEADERS.includes(name.toLowerCase())) res.set(name.toLowerCase(), value);
      }
      if (answer.problem || !operation.statuses.has(answer.status)) {
        // Prism's own problem (a request it refuses that the contract edge let through): sent as it came.
        res.status(answer.status).type("application/problem+json").send(JSON.stringify(answer.body));
        return;
      }
      const context: AnswerContext = {
        operationId: operation.operationId,
        pathId: pathIdOf(operation.path, req.path),
        // As validated: as the operation's rule settled it, with the contract's defaults.
        query: req.query,
        defaultPeriod,
        body: req.body,
        vertical,
        publicUrl,
        explicitExample: explicit,
        now: now(),
      };
      res.status(answer.status).json(shapeAnswer(answer.body, answer.status, context));
    } catch (error) {
      next(error);
    }
  };
}

/**
 * The partner's `Prefer`, or undefined once a mistake in it has been answered: 400 invalid_fields
 * in the API's envelope on every operation, also those whose contract documents no 400 (the
 * header is the mock's alone; the server ignores it), so the answer is sent past the contract's
 * response validation.
 */
function checkedPreference(operation: ContractOperation, req: Request, res: Response): Preference | undefined {
  try {
    return preferenceFor(operation, req.get("prefer"));
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    res.locals.errorCode = error.code;
    res.status(error.status).type("application/json").send(JSON.stringify(error.toBody()));
    return undefined;
  }
}

/** A query as Prism's HTTP server hands it on: repeated names as arrays. */
function queryOf(params: URLSearchParams): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const name of new Set(params.keys())) {
    const values = params.getAll(name);
    query[name] = values.length === 1 ? values[0]! : values;
  }
  return query;
}

/**
 * What Prism is asked when the partner's `Prefer` names no code or example (they win where they
 * do): a test key gets the test-key example of POST /streams (`status: live`, `test: true`), as
 * the server answers a test key.
 */
function defaultChoice(operation: ContractOperation, caller: Caller | undefined): PrismChoice {
  return operation.operationId === "createStream" && caller?.mode === "test" ? { exampleKey: "test" } : {};
}

/** The `{…}` segment of `template` (`/webhooks/deliveries/{delivery_id}/retry`) as `path` has it; undefined without one. */
function pathIdOf(template: string, path: string): string | undefined {
  const segments = template.split("/");
  const at = segments.findIndex((segment) => segment.startsWith("{"));
  if (at === -1) return undefined;
  // Counted from the end: `path` may carry the base the router stripped or not.
  const sent = path.split("/");
  const value = sent[sent.length - (segments.length - at)];
  return value === undefined ? undefined : decodeURIComponent(value);
}
