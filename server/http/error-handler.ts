import type { ErrorRequestHandler, RequestHandler } from "express";
import { ApiError, ERRORS, type ErrorCode } from "../domain/errors.ts";
import { DatabaseError } from "../store/database.ts";
import { createLogger, type Logger } from "../observability/logger.ts";
import type { ContractOperation } from "../../contract/operations.ts";
import type { ErrorObject } from "../../contract/schemas.ts";
import { RequestInvalid } from "./contract-validation.ts";
import { operationOf } from "./operation-routes.ts";

/**
 * The request field a failed check names, from where the check points (never from Ajv's message
 * text): `/body/creator_id` → `creator_id`, `/query/period` → `period`, a missing or unknown
 * property by its name (`/body` missing `url` → `url`); the body itself is `body`.
 */
function fieldOf(error: ErrorObject): string {
  const { missingProperty, additionalProperty } = error.params;
  const named = [missingProperty, additionalProperty].find((name) => typeof name === "string");
  const pointer = named === undefined ? error.instancePath : `${error.instancePath}/${named}`;
  // ["", "body" | "query" | "params" | "headers", ...the field's path]
  return pointer.split("/").slice(2).join(".") || "body";
}

/** What is wrong with the field: Ajv's message, with the allowed values of an enum. */
function detailOf(error: ErrorObject): string {
  const { allowedValues } = error.params;
  const message = error.message ?? "is invalid";
  return error.keyword === "enum" && Array.isArray(allowedValues) ? `${message}: ${allowedValues.join(", ")}` : message;
}

/** Every code the catalogue knows, to accept only those from the contract's `x-field-error-codes`. */
function isErrorCode(code: string | undefined): code is ErrorCode {
  return code !== undefined && Object.hasOwn(ERRORS, code);
}

/**
 * Turns a request-validation failure into the spec's codes: any missing field or body is
 * `missing_fields`; otherwise the first invalid field decides: the code the operation's
 * `x-field-error-codes` gives that field in openapi.yaml (`invalid_url`, `invalid_events` on
 * webhook registration), else `invalid_fields`. Messages name the field. The field codes are a
 * Map, so an undocumented field named `toString` or `constructor` finds nothing rather than a
 * prototype member (which made the error handler itself throw: a 500 with Express's HTML page).
 */
function fromValidation(errors: readonly ErrorObject[], fieldCodes: ReadonlyMap<string, string>): ApiError {
  const missing = errors.find((error) => error.keyword === "required");
  if (missing) return new ApiError("missing_fields", `Missing required field: ${fieldOf(missing)}.`);
  const first = errors[0];
  if (!first) return new ApiError("invalid_fields", "Invalid request.");
  const field = fieldOf(first);
  const fieldCode = fieldCodes.get(field.replace(/\..*$/s, ""));
  const code = isErrorCode(fieldCode) ? fieldCode : "invalid_fields";
  return new ApiError(code, `Invalid field ${field}: ${detailOf(first)}.`);
}

/**
 * What express.json (body-parser) refuses, by its `type`: a client's fault, never a 500. Any
 * other 4xx of its own (a body shorter than its Content-Length) is `invalid_fields` too.
 */
function fromBodyParser(error: unknown): ApiError | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const type = "type" in error ? error.type : undefined;
  const status = "status" in error ? error.status : undefined;
  const exposed = "expose" in error && error.expose === true;
  switch (type) {
    case "entity.parse.failed":
      return new ApiError("missing_fields", "The request body is not valid JSON.");
    case "entity.too.large":
      return new ApiError("invalid_fields", "The request body is too large.");
    case "encoding.unsupported":
    case "charset.unsupported":
      return new ApiError("invalid_fields", "The request body must be UTF-8 encoded JSON.");
  }
  // Any other client error of the body parser: a body that does not inflate (a broken
  // `Content-Encoding: deflate`, `br`) comes from zlib as a 400 with no `type`.
  if ((type !== undefined || exposed) && typeof status === "number" && status >= 400 && status < 500)
    return new ApiError("invalid_fields", "The request body cannot be read.");
  return undefined;
}

const NO_SUCH_ENDPOINT = "No such endpoint. See GET /api/v1/ for the list of endpoints.";

/**
 * Mounted after every route: a request nothing answered is 404 `not_found` in the envelope.
 * Resolution (operation-routes.ts) answers every path the contract serves, so this meets only
 * what it passes by: a target that is not a path (`GET *`, `OPTIONS *`), which Express would
 * answer with an HTML page.
 */
export const noSuchEndpoint: RequestHandler = (_req, _res, next) => next(new ApiError("not_found", NO_SUCH_ENDPOINT));

/**
 * The last middleware: every failure leaves as `{ error: { code, message } }` with the status
 * of its code (also kept in `res.locals.errorCode` for the request's log line and metrics).
 * Unknown failures are 500, logged with the request id: `db_error` (safe to retry) when the
 * database failed, `internal_error` (a retry is not known to help) for anything else.
 *
 * Where the contract documents no 500 for the operation (GET /streams/{id}: the spec reports its
 * lookup failures as 404), such a failure, wherever it happened (the key look-up included), is
 * 404 not_found instead. It is still logged. No write is answered so: a write's failure is 500,
 * the one answer that leaves its outcome open.
 */
export function errorHandler({ logger = createLogger() }: { logger?: Logger } = {}): ErrorRequestHandler {
  return function handleError(error: unknown, req, res, _next) {
    // Undefined for a failure before the operation was resolved (a path no operation names).
    const operation = operationOf(res);
    let apiError = toApiError(error, operation?.fieldErrorCodes ?? NO_FIELD_CODES);
    if (apiError.status >= 500 && apiError.code !== "launch_failed") {
      logger.error(
        {
          request_id: res.locals.requestId ?? res.get("Request-Id"),
          method: req.method,
          operation: operation?.operationId ?? "unknown",
          error,
        },
        "server error",
      );
    }
    if (apiError.status === 500 && answersFailureAs404(operation, req.method))
      apiError = new ApiError("not_found", FAILED_LOOKUP);
    if (res.headersSent) return;
    res.locals.errorCode = apiError.code;
    res.status(apiError.status).json(apiError.toBody());
  };
}

/** True for a read whose contract documents 404 and no 500 (GET /streams/{id}). */
function answersFailureAs404(operation: ContractOperation | undefined, method: string): boolean {
  return (
    operation !== undefined &&
    (method === "GET" || method === "HEAD") &&
    operation.statuses.has(404) &&
    !operation.statuses.has(500)
  );
}

const FAILED_LOOKUP = "A server-side failure stopped this lookup. Retry with backoff.";

const NO_FIELD_CODES: ReadonlyMap<string, string> = new Map();

function toApiError(error: unknown, fieldCodes: ReadonlyMap<string, string>): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof RequestInvalid) return fromValidation(error.errors, fieldCodes);
  // A failure of the database is transient and its outcome learnable by a retry; anything else
  // unexpected is a fault of ours that a retry is not known to mend.
  return fromBodyParser(error) ?? new ApiError(error instanceof DatabaseError ? "db_error" : "internal_error");
}
