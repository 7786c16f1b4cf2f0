import type { RequestHandler } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import { contractDocument, validatorDocument } from "./contract.ts";
import { compileRoutePatternsOnce } from "./validator-route-cache.ts";

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
