/**
 * Prism in this process: its router, request validation, example negotiation and generator, on
 * the contract, called directly instead of over HTTP. The mock opens no port of its own for Prism
 * (only MOCK_PORT), and starts once instead of twice: Prism's CLI forks a worker that loads every
 * module again, and its HTTP server parses what the mock has already parsed.
 */
import { createRequire, Module } from "node:module";
import { fileURLToPath } from "node:url";
import type { Json } from "../contract/indexed.ts";

/** What Prism is asked, as its HTTP server would have passed it on. */
export interface PrismRequest {
  /** Lower case, e.g. `get`. */
  method: string;
  /** The contract's path, without `/api/v1`, e.g. `/streams/abc`. */
  path: string;
  query: Record<string, string | string[]>;
  headers: Record<string, string>;
  body: unknown;
}

/** Per request, what `Prefer` chose (mock/prefer.ts): Prism's own mock settings. */
export interface PrismChoice {
  code?: number;
  exampleKey?: string;
}

export interface PrismAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  /** A problem+json of Prism's own (an error of Prism, not a documented answer). */
  problem: boolean;
}

export interface PrismEngine {
  answer(request: PrismRequest, choice?: PrismChoice): Promise<PrismAnswer>;
}

interface PrismConfig {
  validateRequest: boolean;
  validateResponse: boolean;
  checkSecurity: boolean;
  errors: boolean;
  isProxy: false;
  mock: { dynamic: false; code?: number; exampleKey?: string };
}
type Either<L, R> = { _tag: "Left"; left: L } | { _tag: "Right"; right: R };
interface PrismInstance {
  request(
    input: {
      method: string;
      url: { path: string; query: PrismRequest["query"] };
      headers: Record<string, string>;
      body: unknown;
    },
    operations: unknown[],
    config: PrismConfig,
  ): () => Promise<
    Either<PrismError, { output: { statusCode: number; headers?: Record<string, string>; body?: unknown } }>
  >;
}
interface PrismError extends Error {
  status?: number;
  detail?: string;
  additional?: { headers?: Record<string, string> };
}
interface PrismHttp {
  getHttpOperationsFromSpec(spec: string | Json): Promise<unknown[]>;
  createInstance(config: PrismConfig, components: { logger: unknown }): PrismInstance;
  resetJSONSchemaGenerator(): void;
  ProblemJsonError: { toProblemJson(error: PrismError): unknown };
}

/**
 * Prism's generator loads faker with every locale it has (half a second of the mock's start) and
 * uses one, English, the default. It is handed faker with English alone, which makes the same
 * data: the module Prism requires is put in the require cache as that faker, before Prism loads.
 */
function preloadEnglishFaker(): void {
  const requireAsPrism = createRequire(fileURLToPath(import.meta.resolve("@stoplight/prism-http")));
  const everyLocale = requireAsPrism.resolve("@faker-js/faker");
  if (requireAsPrism.cache[everyLocale]) return;
  const english = requireAsPrism("@faker-js/faker/locale/en") as object;
  const cached = new Module(everyLocale);
  Object.assign(cached, { filename: everyLocale, loaded: true, exports: { default: english, faker: english } });
  requireAsPrism.cache[everyLocale] = cached;
}

/**
 * Loads Prism (a development dependency: the mock is a development tool) and reads the contract
 * into Prism's operations, to answer their documented examples. `spec` is a file or the
 * dereferenced document (copied: Prism's resolver writes into what it is given).
 */
export async function loadPrismEngine({ spec }: { spec: string | Json }): Promise<PrismEngine> {
  preloadEnglishFaker();
  const [prism, core] = await Promise.all([
    import("@stoplight/prism-http") as Promise<unknown> as Promise<PrismHttp>,
    import("@stoplight/prism-core") as Promise<unknown> as Promise<{
      createLogger(name: string, options: object): unknown;
    }>,
  ]);
  const operations = await prism.getHttpOperationsFromSpec(typeof spec === "string" ? spec : structuredClone(spec));
  prism.resetJSONSchemaGenerator();
  // As Prism's CLI configures it, less the validation: the contract edge (mock/app.ts) has validated
  // each request as the server does, against the same contract, and response validation only logs.
  const config: PrismConfig = {
    validateRequest: false,
    validateResponse: false,
    checkSecurity: true,
    errors: false,
    isProxy: false,
    mock: { dynamic: false },
  };
  const instance = prism.createInstance(config, { logger: core.createLogger("mock", { level: "silent" }) });
  return {
    async answer(request, choice = {}) {
      const input = {
        method: request.method,
        url: { path: request.path, query: request.query },
        headers: request.headers,
        body: request.body,
      };
      const result = await instance.request(input, operations, { ...config, mock: { ...config.mock, ...choice } })();
      if (result._tag === "Right") {
        const { statusCode, headers = {}, body } = result.right.output;
        return { status: statusCode, headers, body, problem: false };
      }
      const error = result.left;
      return {
        status: error.status ?? 500,
        headers: error.additional?.headers ?? {},
        body: prism.ProblemJsonError.toProblemJson(error),
        problem: true,
      };
    },
  };
}
