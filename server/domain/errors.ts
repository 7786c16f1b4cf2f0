import type { components } from "../../generated/api.ts";
import { errorMessageMaxLength } from "../../generated/limits.ts";
import { atMostCharacters } from "./text.ts";

/** Every error code the contract documents (`ErrorCode` and the dashboard's `DashboardErrorCode` in openapi.yaml). */
export type ErrorCode = components["schemas"]["ErrorCode"] | components["schemas"]["DashboardErrorCode"];

/**
 * The one table of errors: every code the contract documents, with its HTTP status and default
 * message. Everything that refuses a request (routes, middleware, services, the domain) throws
 * `ApiError(code)` by name, with a message of its own where the default says too little; the error
 * handler (http/error-handler.ts) answers it as the spec's `{ error: { code, message } }` with the
 * code's status. Keyed by the contract's enum: a code the contract adds and the table lacks, or
 * one the table has and the contract does not, fails tsc; errors.test.ts checks each status
 * against the contract's own tables and responses.
 */
export const ERRORS = {
  missing_fields: { status: 400, message: "A required field is missing." },
  invalid_fields: { status: 400, message: "A field is invalid." },
  invalid_creator: { status: 400, message: "creator_id matches no listed creator; use an id from GET /creators." },
  invalid_url: { status: 400, message: "url must be an HTTPS URL on a public host." },
  invalid_events: {
    status: 400,
    message: "events must list at least one of stream.started, stream.ended, stream.error.",
  },
  unauthorized: { status: 401, message: "Missing or invalid API key. Send Authorization: Bearer <API_KEY>." },
  plan_required: { status: 402, message: "Live keys require the Growth plan or above." },
  insufficient_credits: { status: 402, message: "The credit wallet cannot cover the projected cost of this stream." },
  no_minutes: { status: 402, message: "All API streaming minutes of the plan for this billing period are used." },
  insufficient_scope: { status: 403, message: "The API key lacks the scope this endpoint requires." },
  vertical_mismatch: { status: 403, message: "The request does not match the brand's vertical." },
  test_mode_only: { status: 403, message: "This endpoint is a test-mode tool; use a test key (svc_test_…)." },
  not_found: { status: 404, message: "Not found." },
  idempotency_key_in_use: {
    status: 409,
    message: "A request with this Idempotency-Key is still being processed; retry after a short wait.",
  },
  idempotency_key_reused: {
    status: 422,
    message: "This Idempotency-Key was already used with another request; send a new key for a new request.",
  },
  rate_limited: { status: 429, message: "Too many requests: the brand's per-minute request limit is reached." },
  concurrency_limit: {
    status: 429,
    message: "The brand already has the maximum number of active streams; end one before starting another.",
  },
  listen_limit: {
    status: 429,
    message:
      "The brand already holds the most event streams this server process allows; close one before opening another.",
  },
  webhook_limit: {
    status: 429,
    message: "The brand already has the most webhooks it may have in this mode; delete one before registering another.",
  },
  db_error: { status: 500, message: "A server-side database error occurred; safe to retry with backoff." },
  internal_error: {
    status: 500,
    message:
      "An unexpected server error occurred; the request may or may not have been done. Check before retrying, and quote the Request-Id to support.",
  },
  launch_failed: { status: 502, message: "The stream could not be launched; it exists in status error." },
  // The dashboard API's own codes.
  weak_password: { status: 400, message: "The password is too short, too long or too common." },
  invalid_credentials: { status: 401, message: "Wrong email, password or code." },
  totp_required: {
    status: 401,
    message: "Two-factor authentication is on: send the code from the authenticator app (totp_code).",
  },
  brand_required: {
    status: 401,
    message: "The email and password are those of members of several brands: sign in again with brand_id.",
  },
  csrf_failed: {
    status: 403,
    message: "The request lacks a valid X-CSRF-Token or comes from another origin; reload the dashboard.",
  },
  forbidden: { status: 403, message: "Your role does not allow this change." },
  member_exists: { status: 409, message: "This email already belongs to a member of the brand." },
  last_owner: { status: 409, message: "The brand must keep at least one owner." },
  totp_enabled: { status: 409, message: "Two-factor authentication is already on." },
  key_limit: { status: 409, message: "The brand has as many usable API keys as it may; revoke one first." },
  invitation_limit: { status: 409, message: "The brand has as many open invitations as it may; revoke one first." },
  member_limit: { status: 409, message: "The brand has as many members as it may; remove one first." },
  key_name_taken: {
    status: 409,
    message: "Another key of this brand and mode, not revoked, has this name; choose another or revoke that one.",
  },
  backup_unavailable: { status: 409, message: "This server cannot take a backup now." },
} as const satisfies Record<ErrorCode, { status: number; message: string }>;

/**
 * An error answer. Its message is cut to the contract's maxLength for error messages: messages may
 * quote what the request sent (an undocumented field's name, an id), which can be long.
 */
export class ApiError extends Error {
  override name = "ApiError";
  readonly code: ErrorCode;
  readonly status: number;

  constructor(code: ErrorCode, message: string = ERRORS[code].message) {
    super(atMostCharacters(message, errorMessageMaxLength));
    this.code = code;
    this.status = ERRORS[code].status;
  }

  toBody(): { error: { code: ErrorCode; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}
