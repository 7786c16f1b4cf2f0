import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { RequestHandler } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import { contractDocument, validatorDocument } from "./contract.ts";

/**
 * Validates every request and response against openapi.yaml. The server and the benchmark's
 * framework ceiling (bench/servers/framework.ts) both build it here, so they cannot drift apart.
 */
export function contractValidator(doc: Record<string, any> = contractDocument()): RequestHandler[] {
  compileRoutePatternsOnce();
  return OpenApiValidator.middleware({
    apiSpec: validatorDocument(doc) as never,
    validateRequests: { allowUnknownQueryParameters: true },
    validateResponses: true,
    validateSecurity: false,
    validateFormats: true,
  }) as RequestHandler[];
}

/** The options path-to-regexp 8 reads for a regexp (and `strict`, which the validator passes). */
const OPTION_NAMES = new Set(["sensitive", "strict", "end", "trailing", "delimiter"]);

/** A key for the options, cheaper than JSON; undefined (not remembered) for options it does not know. */
function optionsKey(options: unknown): string | undefined {
  if (options === undefined || options === null) return "\u0000";
  if (typeof options !== "object") return undefined;
  let key = "";
  for (const [name, value] of Object.entries(options)) {
    if (!OPTION_NAMES.has(name) || (value !== undefined && typeof value !== "boolean" && typeof value !== "string")) return undefined;
    key += `${name}=${String(value)};`;
  }
  return `${key}\u0000`;
}

type PathToRegexp = ((path: unknown, options?: unknown) => unknown) & { compiledOnce?: true };

/** Route patterns remembered at most; the contract has a few dozen. */
const MAX_PATTERNS = 1_000;

/**
 * express-openapi-validator 5.6 finds a request's operation by compiling every route pattern of
 * the contract with path-to-regexp, on every request, until one matches (its `lookupRoute`):
 * about a tenth of a request's CPU. The result depends only on the pattern and the options, and
 * its regexps carry no state (no `g` or `y` flag), so each is compiled once and remembered. The
 * module is the validator's own (resolved from its package), patched once per process.
 */
function compileRoutePatternsOnce(): void {
  const validatorEntry = fileURLToPath(import.meta.resolve("express-openapi-validator"));
  const pathToRegexpModule = createRequire(validatorEntry)("path-to-regexp") as { pathToRegexp: PathToRegexp };
  const compile = pathToRegexpModule.pathToRegexp;
  if (compile.compiledOnce) return;
  const compiled = new Map<string, unknown>();
  const compileOnce: PathToRegexp = (path, options) => {
    const settings = optionsKey(options);
    if (typeof path !== "string" || settings === undefined) return compile(path, options);
    const key = `${settings}${path}`;
    if (!compiled.has(key)) {
      if (compiled.size >= MAX_PATTERNS) return compile(path, options);
      compiled.set(key, compile(path, options));
    }
    return compiled.get(key);
  };
  compileOnce.compiledOnce = true;
  pathToRegexpModule.pathToRegexp = compileOnce;
}
