/** How the dashboard API shows members, brands, invitations and deliveries (shapes of openapi.yaml). */
import type { components } from "../../../../generated/api.ts";
import { planAllowsLiveKeys } from "../../../domain/plans.ts";
import type { Brand, WebhookDelivery } from "../../../domain/types.ts";
import type { Member, Role } from "../../../services/members/context.ts";
import { deliveryErrorText } from "../../response-bodies.ts";

type Schemas = components["schemas"];

export function presentMember(member: Member): Schemas["DashboardMember"] {
  return {
    member_id: member.id,
    email: member.email,
    role: member.role,
    totp_enabled: member.totpSecret !== null,
    created_at: member.createdAt.toISOString(),
    last_sign_in_at: member.lastSignInAt?.toISOString() ?? null,
  };
}

export function presentBrand(brand: Brand): Schemas["DashboardBrand"] {
  return {
    brand_id: brand.id,
    name: brand.name,
    vertical: brand.vertical,
    plan: brand.plan,
    live_keys_allowed: planAllowsLiveKeys(brand.plan),
  };
}

export function presentInvitation(invitation: {
  id: string;
  email: string;
  role: Role;
  createdAt: Date;
  expiresAt: Date;
}): Schemas["DashboardInvitation"] {
  return {
    invitation_id: invitation.id,
    email: invitation.email,
    role: invitation.role,
    created_at: invitation.createdAt.toISOString(),
    expires_at: invitation.expiresAt.toISOString(),
  };
}

/** Where a delivery stands: its status, attempts and their last answer, as every delivery view shows it. */
export function deliveryOutcome(delivery: WebhookDelivery) {
  return {
    status: delivery.status,
    attempts: delivery.attempt,
    response_status: delivery.responseStatus,
    error: deliveryErrorText(delivery.error),
    last_attempt_at: delivery.lastAttemptAt?.toISOString() ?? null,
    next_attempt_at: delivery.nextAttemptAt?.toISOString() ?? null,
  };
}

export function presentDelivery(delivery: WebhookDelivery): Schemas["DashboardDelivery"] {
  return {
    delivery_id: delivery.id,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    ...deliveryOutcome(delivery),
    created_at: delivery.createdAt.toISOString(),
  };
}

/** The dashboard page an invitation's token opens; in the fragment, so no server log or Referer carries it. */
export const invitationUrl = (publicBaseUrl: string, token: string) => `${publicBaseUrl}/dashboard/invitation#${token}`;

/** The dashboard page a password reset's token opens, in the fragment like an invitation's. */
export const resetUrl = (publicBaseUrl: string, token: string) => `${publicBaseUrl}/dashboard/reset#${token}`;
