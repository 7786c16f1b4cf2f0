/** The brand's people: members and their roles, invitations, recovery for a member, and the audit log. */
import type { components } from "../../../../generated/api.ts";
import { isUuid } from "../../../domain/ids.ts";
import type { MembersContext } from "../../../services/members/context.ts";
import { invite, openInvitations, revokeInvitation } from "../../../services/members/invitations.ts";
import { auditLog, brandMembers, changeRole, removeMember } from "../../../services/members/membership.ts";
import { clearMemberThrottle, issuePasswordReset } from "../../../services/members/password-reset.ts";
import { ApiError } from "../../../domain/errors.ts";
import type { Invitation } from "../../../domain/types.ts";
import {
  DEVICE_COOKIE,
  type DashboardHttpOptions,
  dashboardCallerOf,
  dashboardCookie,
} from "../../dashboard-session.ts";
import type { Request } from "express";
import { proveOwnerGrant } from "../../../services/members/credentials.ts";
import type { OperationHandlers } from "../../dispatch.ts";
import { actorOf, operatorOf } from "./actors.ts";
import { invitationUrl, presentInvitation, presentMember, resetUrl } from "./response-bodies.ts";

type Schemas = components["schemas"];

export function teamHandlers(
  mctx: MembersContext,
  http: DashboardHttpOptions,
): OperationHandlers<
  | "dashboardListMembers"
  | "dashboardInviteMember"
  | "dashboardRevokeInvitation"
  | "dashboardChangeRole"
  | "dashboardRemoveMember"
  | "dashboardIssuePasswordReset"
  | "dashboardClearSignInThrottle"
  | "dashboardListAuditLog"
  | "adminInviteMember"
  | "adminIssuePasswordReset"
  | "adminClearSignInThrottle"
> {
  /** What the acting owner proves: the password, the code, and the browser (the sign-in throttle's). */
  const proofOf = (req: Request, body: { password?: string | undefined; totp_code?: string | undefined }) => ({
    password: body.password,
    code: body.totp_code,
    device: dashboardCookie(req, http, DEVICE_COOKIE),
  });

  /** A new invitation and its one-time link (shown once: only the token's hash is kept). */
  const invitationCreated = (invitation: Invitation, token: string): Schemas["DashboardInvitationCreated"] => ({
    ...presentInvitation(invitation),
    brand_id: invitation.brandId,
    url: invitationUrl(http.publicBaseUrl, token),
  });

  return {
    async dashboardListMembers(_req, res) {
      const { brand } = dashboardCallerOf(res);
      const [list, invitations] = await Promise.all([brandMembers(mctx, brand.id), openInvitations(mctx, brand.id)]);
      res.json({ members: list.map(presentMember), invitations: invitations.map(presentInvitation) });
    },

    async dashboardInviteMember(req, res) {
      const caller = dashboardCallerOf(res);
      const body = req.body;
      await proveOwnerGrant(mctx, actorOf(req, res), body.role, proofOf(req, body));
      const { invitation, token } = await invite(mctx, actorOf(req, res), {
        brandId: caller.brand.id,
        email: body.email,
        role: body.role,
      });
      res.status(201).json(invitationCreated(invitation, token));
    },

    async adminInviteMember(req, res) {
      const body = req.body;
      const { invitation, token } = await invite(mctx, operatorOf(req), {
        brandId: body.brand_id,
        email: body.email,
        // The contract's default: the operator invites a brand's first member.
        role: body.role ?? "owner",
      });
      res.status(201).json(invitationCreated(invitation, token));
    },

    async dashboardRevokeInvitation(req, res) {
      const id = req.params.invitation_id;
      if (!isUuid(id)) throw new ApiError("not_found", `No open invitation with id ${id}.`);
      await revokeInvitation(mctx, actorOf(req, res), id);
      res.json({ invitation_id: id, revoked: true });
    },

    async dashboardChangeRole(req, res) {
      const id = req.params.member_id;
      if (!isUuid(id)) throw new ApiError("not_found", `No member with id ${id}.`);
      await proveOwnerGrant(mctx, actorOf(req, res), req.body.role, proofOf(req, req.body));
      const member = await changeRole(mctx, actorOf(req, res), id, req.body.role);
      res.json(presentMember(member));
    },

    async dashboardRemoveMember(req, res) {
      const id = req.params.member_id;
      if (!isUuid(id)) throw new ApiError("not_found", `No member with id ${id}.`);
      await removeMember(mctx, actorOf(req, res), id);
      res.json({ member_id: id, removed: true });
    },

    async dashboardIssuePasswordReset(req, res) {
      const caller = dashboardCallerOf(res);
      const body = req.body;
      const issued = await issuePasswordReset(
        mctx,
        actorOf(req, res),
        { brandId: caller.brand.id, memberId: body.member_id },
        {
          turnOffTwoFactor: body.turn_off_two_factor ?? false,
          proof: { ...proofOf(req, body), password: body.password },
        },
      );
      res.status(201).json({
        member_id: issued.member.id,
        email: issued.member.email,
        expires_at: issued.expiresAt.toISOString(),
        url: resetUrl(http.publicBaseUrl, issued.token),
      });
    },

    async adminIssuePasswordReset(req, res) {
      const body = req.body;
      const issued = await issuePasswordReset(
        mctx,
        operatorOf(req),
        { email: body.email, brandId: body.brand_id },
        { turnOffTwoFactor: body.turn_off_two_factor ?? false },
      );
      res.status(201).json({
        member_id: issued.member.id,
        brand_id: issued.member.brandId,
        email: issued.member.email,
        expires_at: issued.expiresAt.toISOString(),
        url: resetUrl(http.publicBaseUrl, issued.token),
      });
    },

    async dashboardClearSignInThrottle(req, res) {
      const caller = dashboardCallerOf(res);
      const { member } = await clearMemberThrottle(mctx, actorOf(req, res), {
        brandId: caller.brand.id,
        memberId: req.body.member_id,
      });
      res.json({ member_id: member.id, cleared: true });
    },

    async adminClearSignInThrottle(req, res) {
      const { member } = await clearMemberThrottle(mctx, operatorOf(req), {
        email: req.body.email,
        brandId: req.body.brand_id,
      });
      res.json({ member_id: member.id, brand_id: member.brandId, email: member.email, cleared: true });
    },

    async dashboardListAuditLog(req, res) {
      const { limit, offset } = req.query;
      const filter = { action: req.query.action, memberId: req.query.member_id };
      const { brand } = dashboardCallerOf(res);
      const { entries, total } = await auditLog(mctx, brand.id, filter, { limit, offset });
      res.json({
        entries: entries.map((entry) => ({
          entry_id: entry.id,
          at: entry.at.toISOString(),
          actor: entry.actor,
          member_id: entry.memberId,
          address: entry.address,
          action: entry.action,
          mode: entry.mode,
          target_id: entry.targetId,
          target_name: entry.targetName,
          detail: entry.detail,
        })),
        total,
        limit,
        offset,
      });
    },
  };
}
