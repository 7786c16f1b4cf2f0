/**
 * Why the domain or a service refuses a request, in the domain's own terms. The HTTP layer alone
 * decides what each reason is on the wire (status and contract error code: http/domain-errors.ts),
 * so nothing below it knows a status.
 */
export type DomainErrorReason =
  /** No stream, brand, key or delivery with that id, as far as the caller may see. */
  | "not_found"
  /** The stream exists but is not live, so it cannot be ended. */
  | "not_live"
  /** The API key is missing, malformed, unknown, revoked or expired: all alike, so none is revealed. */
  | "unauthenticated"
  /** The stream does not fit the brand's vertical (its vertical, or a platform the vertical excludes). */
  | "vertical_mismatch"
  /** The creator id names no creator of the catalogue. */
  | "unknown_creator"
  /** The brand already has as many active streams in this mode as it may. */
  | "concurrency_limit_reached"
  /** The plan's streaming minutes for the billing period are used. */
  | "plan_minutes_used_up"
  /** The credits not held by other streams cannot cover the stream's projected cost. */
  | "credits_insufficient"
  /** The provider could not launch the stream, which is kept in status error. */
  | "launch_failed"
  /** A webhook URL that is not HTTPS on a public host (nor a host the operator allowed). */
  | "unsafe_webhook_url"
  /** The brand already has as many webhooks in this mode as it may. */
  | "webhook_limit_reached"
  /** The Idempotency-Key was used with another request. */
  | "idempotency_key_reused"
  /** Another attempt with the same Idempotency-Key holds it. */
  | "idempotency_key_in_use"
  /** The change contradicts the current state: credits below what is held, a retry of a delivery that did not fail. */
  | "conflict"
  /** A new dashboard password is too short, too long or common. */
  | "weak_password"
  /** A dashboard sign-in or password check failed (email, password or code: all alike). */
  | "wrong_credentials"
  /** The member has two-factor on and the sign-in carried no code. */
  | "second_factor_required"
  /** The email and password are those of members of several brands, and the sign-in named none. */
  | "brand_required"
  /** Too many failed sign-ins for the account or the address; the detail says how long to wait. */
  | "sign_in_throttled"
  /** The member's role does not allow the change. */
  | "role_forbids"
  /** The email already belongs to a member. */
  | "member_exists"
  /** The change would leave the brand without an owner. */
  | "last_owner"
  /** Two-factor is already on. */
  | "second_factor_enabled"
  /** The brand has as many usable API keys as its cap allows. */
  | "key_cap_reached"
  /** The brand has as many open invitations as its cap allows. */
  | "invitation_cap_reached"
  /** The brand has as many members as its cap allows. */
  | "member_cap_reached"
  /** Another key of the brand and mode, not revoked, has the name. */
  | "key_name_taken";

/**
 * A refusal of the domain or a service. `detail` is what the caller is told; without one the
 * HTTP layer gives the reason's standard wording (which may name headers the domain knows nothing of).
 */
export class DomainError extends Error {
  override name = "DomainError";
  readonly reason: DomainErrorReason;
  readonly detail?: string;

  constructor(reason: DomainErrorReason, detail?: string) {
    super(detail ?? reason);
    this.reason = reason;
    this.detail = detail;
  }
}
