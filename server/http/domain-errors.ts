import type { DomainError, DomainErrorReason } from "../domain/errors.ts";
import { ApiError, type ErrorCode } from "../errors.ts";

/**
 * The contract's error code for each reason the domain refuses with; the code brings its status
 * (errors.ts). Keyed by the reason union, so a reason added without a code here fails tsc. Two
 * reasons share a code where the spec answers them alike: a stream that is not live cannot be
 * ended and is answered 404, and the contract has no 409, so a conflict is `invalid_fields`.
 */
export const CODE_OF_REASON = {
  not_found: "not_found",
  not_live: "not_found",
  unauthenticated: "unauthorized",
  vertical_mismatch: "vertical_mismatch",
  unknown_creator: "invalid_creator",
  concurrency_limit_reached: "concurrency_limit",
  plan_minutes_used_up: "no_minutes",
  credits_insufficient: "insufficient_credits",
  launch_failed: "launch_failed",
  unsafe_webhook_url: "invalid_url",
  webhook_limit_reached: "webhook_limit",
  idempotency_key_reused: "idempotency_key_reused",
  idempotency_key_in_use: "idempotency_key_in_use",
  conflict: "invalid_fields",
  weak_password: "weak_password",
  wrong_credentials: "invalid_credentials",
  second_factor_required: "totp_required",
  brand_required: "brand_required",
  sign_in_throttled: "rate_limited",
  role_forbids: "forbidden",
  member_exists: "member_exists",
  last_owner: "last_owner",
  second_factor_enabled: "totp_enabled",
  key_cap_reached: "key_limit",
  invitation_cap_reached: "invitation_limit",
  member_cap_reached: "member_limit",
  key_name_taken: "key_name_taken",
} as const satisfies Record<DomainErrorReason, ErrorCode>;

/** The HTTP error a domain refusal is answered with: its reason's code, and the domain's detail or else the code's standard message. */
export function httpErrorOf(error: DomainError): ApiError {
  return new ApiError(CODE_OF_REASON[error.reason], error.detail);
}
