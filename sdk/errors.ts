import type { components } from "../generated/api.ts";

/** Every error code the API documents; `ErrorCode` in openapi.yaml. */
export type ErrorCode = components["schemas"]["ErrorCode"];

export interface ApiErrorInit<C extends ErrorCode | undefined> {
  status: number;
  code: C;
  message: string;
  raw: unknown;
  /** The response's headers; an empty set when the error was built without a response. */
  headers?: Headers | undefined;
}

/** The response header that names the request in the server's logs; quote it to support. */
export const REQUEST_ID_HEADER = "Request-Id";

/**
 * An HTTP answer outside 2xx. `code` is the wire code; it is `undefined` only when the body was
 * not the API's `{ error: { code, message } }` envelope or carried a code this SDK does not know
 * (then `raw` holds the body as received). Tell errors apart by `code` or by subclass, never by
 * `status`: several codes share one status.
 */
export class ApiError<C extends ErrorCode | undefined = ErrorCode | undefined> extends Error {
  override name = "ApiError";
  readonly status: number;
  readonly code: C;
  readonly raw: unknown;
  /** The error response's headers (`RateLimit-*`, `Request-Id`, …). */
  readonly headers: Headers;
  /** The server's id for this request (`Request-Id`), for support tickets and log searches. */
  readonly requestId: string | undefined;

  constructor({ status, code, message, raw, headers = new Headers() }: ApiErrorInit<C>) {
    super(message);
    this.status = status;
    this.code = code;
    this.raw = raw;
    this.headers = headers;
    this.requestId = headers.get(REQUEST_ID_HEADER) ?? undefined;
  }
}

/** 400: the body is not valid JSON, or a required field or query parameter is absent. */
export class MissingFieldsError extends ApiError<"missing_fields"> {
  override name = "MissingFieldsError";
}
/** 400: a field violates a documented constraint (length, platform, duration, period, …). */
export class InvalidFieldsError extends ApiError<"invalid_fields"> {
  override name = "InvalidFieldsError";
}
/** 400: `creator_id` matches no creator listed by GET /creators. */
export class InvalidCreatorError extends ApiError<"invalid_creator"> {
  override name = "InvalidCreatorError";
}
/** 400: the webhook `url` is not an HTTPS URL on a public host. */
export class InvalidUrlError extends ApiError<"invalid_url"> {
  override name = "InvalidUrlError";
}
/** 400: the webhook `events` list is empty or names an unknown event type. */
export class InvalidEventsError extends ApiError<"invalid_events"> {
  override name = "InvalidEventsError";
}
/** 401: the API key is missing, malformed, revoked or expired. */
export class UnauthorizedError extends ApiError<"unauthorized"> {
  override name = "UnauthorizedError";
}
/** 402: a live key was used by a brand below the Growth plan. */
export class PlanRequiredError extends ApiError<"plan_required"> {
  override name = "PlanRequiredError";
}
/** 402: the credit wallet cannot cover the projected cost of the stream. */
export class InsufficientCreditsError extends ApiError<"insufficient_credits"> {
  override name = "InsufficientCreditsError";
}
/** 402: the plan's streaming minutes for the billing period are used up. */
export class NoMinutesError extends ApiError<"no_minutes"> {
  override name = "NoMinutesError";
}
/** 403: the API key lacks the scope the endpoint requires. */
export class InsufficientScopeError extends ApiError<"insufficient_scope"> {
  override name = "InsufficientScopeError";
}
/** 403: the vertical or platform is not allowed for the brand's vertical. */
export class VerticalMismatchError extends ApiError<"vertical_mismatch"> {
  override name = "VerticalMismatchError";
}
/** 403: a live key on a test-mode tool (`GET /webhooks/listen`, the test clock); use a test key. */
export class TestModeOnlyError extends ApiError<"test_mode_only"> {
  override name = "TestModeOnlyError";
}
/** 404: the resource is absent, belongs to another brand, or (when ending a stream) is not live. */
export class NotFoundError extends ApiError<"not_found"> {
  override name = "NotFoundError";
}
/** 409: a request with the same `Idempotency-Key` is still being processed; POSTs with a key are retried automatically. */
export class IdempotencyKeyInUseError extends ApiError<"idempotency_key_in_use"> {
  override name = "IdempotencyKeyInUseError";
}
/** 422: the `Idempotency-Key` was used with another body or operation in the last 24 hours; send a new key. */
export class IdempotencyKeyReusedError extends ApiError<"idempotency_key_reused"> {
  override name = "IdempotencyKeyReusedError";
}
/** 429: the brand is over its per-minute request limit; GET and DELETE are retried automatically. */
export class RateLimitedError extends ApiError<"rate_limited"> {
  override name = "RateLimitedError";
}
/** 429: the brand already has its maximum of active streams; retrying does not clear it. */
export class ConcurrencyLimitError extends ApiError<"concurrency_limit"> {
  override name = "ConcurrencyLimitError";
}
/** 429: the brand already holds the most event streams (`GET /webhooks/listen`) a server process allows; close one. */
export class ListenLimitError extends ApiError<"listen_limit"> {
  override name = "ListenLimitError";
}
/** 429: the brand already has 16 webhooks in the key's mode; retrying does not clear it: delete one first. */
export class WebhookLimitError extends ApiError<"webhook_limit"> {
  override name = "WebhookLimitError";
}
/** 500: a server-side database failure; GET and DELETE are retried automatically. */
export class DatabaseError extends ApiError<"db_error"> {
  override name = "DatabaseError";
}
/** 500: an unexpected server-side failure, not the database's; never retried automatically (the outcome is unknown). */
export class InternalServerError extends ApiError<"internal_error"> {
  override name = "InternalServerError";
}
/** 502: the stream could not be launched; it exists in status `error` and a retry creates a new one. */
export class LaunchFailedError extends ApiError<"launch_failed"> {
  override name = "LaunchFailedError";
}

// Typed against the generated ErrorCode union, so a code added to openapi.yaml fails compilation
// here until it has a class.
const ERROR_CLASSES: { [C in ErrorCode]: new (init: ApiErrorInit<C>) => ApiError<C> } = {
  missing_fields: MissingFieldsError,
  invalid_fields: InvalidFieldsError,
  invalid_creator: InvalidCreatorError,
  invalid_url: InvalidUrlError,
  invalid_events: InvalidEventsError,
  unauthorized: UnauthorizedError,
  plan_required: PlanRequiredError,
  insufficient_credits: InsufficientCreditsError,
  no_minutes: NoMinutesError,
  insufficient_scope: InsufficientScopeError,
  vertical_mismatch: VerticalMismatchError,
  test_mode_only: TestModeOnlyError,
  not_found: NotFoundError,
  idempotency_key_in_use: IdempotencyKeyInUseError,
  idempotency_key_reused: IdempotencyKeyReusedError,
  rate_limited: RateLimitedError,
  concurrency_limit: ConcurrencyLimitError,
  listen_limit: ListenLimitError,
  webhook_limit: WebhookLimitError,
  db_error: DatabaseError,
  internal_error: InternalServerError,
  launch_failed: LaunchFailedError,
};

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_CLASSES, value);
}

/** Reads the wire code out of an error body, or `undefined` when it is not a known code. */
export function errorCodeOf(body: unknown): ErrorCode | undefined {
  const code = envelopeOf(body)?.code;
  return isErrorCode(code) ? code : undefined;
}

/**
 * Builds the error for a non-2xx answer from its status and (JSON-parsed, if it parsed) body;
 * pass the `response` too so the error carries its headers and request id. Never throws: a body
 * that is not the API's error envelope gives a plain `ApiError` whose message says what arrived.
 */
export function errorFromBody(
  status: number,
  body: unknown,
  response?: Pick<Response, "headers"> | undefined,
): ApiError {
  const headers = response?.headers;
  const envelope = envelopeOf(body);
  if (!envelope) {
    return new ApiError({
      status,
      code: undefined,
      message: `HTTP ${status} with a body that is not an API error ({ error: { code, message } }): ${preview(body)}`,
      raw: body,
      headers,
    });
  }
  const serverMessage = typeof envelope.message === "string" ? envelope.message : "";
  if (!isErrorCode(envelope.code)) {
    return new ApiError({
      status,
      code: undefined,
      message: `HTTP ${status} with unrecognised error code ${preview(envelope.code)}: ${serverMessage || "(no message)"}`,
      raw: body,
      headers,
    });
  }
  return construct(envelope.code, { status, message: serverMessage || envelope.code, raw: body, headers });
}

function construct<C extends ErrorCode>(code: C, init: Omit<ApiErrorInit<C>, "code">): ApiError<C> {
  const ErrorClass = ERROR_CLASSES[code] as new (init: ApiErrorInit<C>) => ApiError<C>;
  return new ErrorClass({ ...init, code });
}

function envelopeOf(body: unknown): { code?: unknown; message?: unknown } | undefined {
  if (typeof body !== "object" || body === null || !("error" in body)) return undefined;
  const error = body.error;
  return typeof error === "object" && error !== null ? error : undefined;
}

function preview(value: unknown): string {
  if (value === undefined || value === "") return "(empty body)";
  const text = typeof value === "string" ? JSON.stringify(value) : safeStringify(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * The request never got an HTTP answer (DNS, refused connection, reset, TLS). GET, DELETE and
 * POSTs with an Idempotency-Key were retried before this is thrown; a POST may still have
 * reached the server: retry it with the same `idempotencyKey` to get its answer.
 */
export class ApiConnectionError extends Error {
  override name = "ApiConnectionError";
  readonly method: string;
  readonly url: string;
  readonly attempts: number;
  /** The POST's Idempotency-Key: pass it as `idempotencyKey` to retry without acting twice. */
  readonly idempotencyKey?: string | undefined;

  constructor(method: string, url: string, attempts: number, cause: unknown, idempotencyKey?: string | undefined) {
    const reason = describe(cause);
    const hint =
      method !== "POST"
        ? " Check baseUrl and that the server is reachable."
        : idempotencyKey !== undefined
          ? ` The request may have reached the server: retry with the same idempotencyKey (${idempotencyKey}) to get its answer without acting twice.`
          : " The request may have reached the server: list before retrying a POST /streams.";
    super(`${method} ${url} failed after ${attempts} attempt(s): ${reason}.${hint}`, { cause });
    this.method = method;
    this.url = url;
    this.attempts = attempts;
    this.idempotencyKey = idempotencyKey;
  }
}

// undici reports every network failure as "fetch failed" and puts the useful part in `cause`.
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const inner = error.cause;
  if (inner instanceof Error) {
    const code = "code" in inner && typeof inner.code === "string" ? inner.code : undefined;
    return `${error.message} (${code ?? inner.message})`;
  }
  return error.message;
}
