import type { RequestHandler } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import type { Contract } from "../../contract/contract.ts";
import { API_BASE } from "../../contract/operations.ts";
import { compileRoutePatternsOnce } from "./validator-route-cache.ts";

type Json = Record<string, any>;

/**
 * Validates every request and response against openapi.yaml. The server and the benchmark's
 * framework ceiling (bench/servers/framework.ts) both build it here, so they cannot drift apart.
 */
export function contractValidator(contract: Contract): RequestHandler[] {
  compileRoutePatternsOnce();
  return OpenApiValidator.middleware({
    apiSpec: validatorDocument(contract) as never,
    validateRequests: { allowUnknownQueryParameters: true },
    validateResponses: true,
    validateSecurity: false,
    validateFormats: true,
  }) as RequestHandler[];
}

/**
 * The contract as express-openapi-validator sees it: one server at the root and every path under
 * its served prefix, so public and operator operations are validated by one middleware. A copy,
 * since the loaded contract is frozen and shared; the bundled form, whose `$ref`s the validator
 * resolves itself, as it always has.
 */
function validatorDocument({ document, operations }: Contract): Json {
  const copy = structuredClone(document);
  const paths: Json = {};
  for (const [path, item] of Object.entries<Json>(copy.paths)) {
    delete item.servers;
    paths[operations.all.find((operation) => operation.path === path)?.servedPath ?? API_BASE + path] = item;
  }
  copy.paths = paths;
  copy.servers = [{ url: "/" }];
  delete copy.webhooks;
  return copy;
}
