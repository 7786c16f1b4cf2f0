/**
 * Invitations: one-time links by which an owner (or the operator) brings a member into a brand;
 * accepting one makes the member and signs them in.
 */
import { randomUUID } from "node:crypto";
import { brandCaps } from "../../../generated/limits.ts";
import { ApiError } from "../../domain/errors.ts";
import { normalEmail, randomToken, sha256Hex } from "../../domain/secrets.ts";
import type { Brand } from "../../domain/types.ts";
import { findBrand } from "../../store/brands.ts";
import {
  findOpenInvitation,
  insertInvitation,
  listOpenInvitations,
  lockOpenInvitation,
  markInvitation,
} from "../../store/invitations.ts";
import { findMemberByEmail, insertMember } from "../../store/members.ts";
import type { Invitation, Role } from "../../domain/types.ts";
import { lockBrandForCreation, refuseInvitationOverCap, refuseMemberOverCap } from "../brand-caps.ts";
import type { Actor, MemberActor, MembersContext } from "./context.ts";
import { hashPassword, refuseWeakPassword } from "./credentials.ts";
import { audit } from "./membership.ts";
import { type SessionClient, type SignedIn, startSession } from "./sessions.ts";

export const INVITATION_TTL_MS = 72 * 60 * 60 * 1000;

export interface InvitationCreated {
  invitation: Invitation;
  token: string;
}

/** A one-time invitation to the brand; the token is returned once and only its hash stored. */
export async function invite(
  ctx: MembersContext,
  actor: Actor,
  input: { brandId: string; email: string; role: Role },
): Promise<InvitationCreated> {
  const email = normalEmail(input.email);
  const now = ctx.clock();
  return ctx.db.transaction(async (tx) => {
    await lockBrandForCreation(tx, input.brandId);
    // A member is an email within one brand (migration 027): another brand's members play no part,
    // so an inviter learns nothing of who belongs elsewhere.
    if (await findMemberByEmail(tx, input.brandId, email))
      throw new ApiError("member_exists", `${email} is already a member of this brand.`);
    await refuseInvitationOverCap(tx, input.brandId, now);
    const token = randomToken();
    const invitation = await insertInvitation(
      tx,
      {
        id: randomUUID(),
        brandId: input.brandId,
        email,
        role: input.role,
        createdAt: now,
        expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
      },
      sha256Hex(token),
      "member" in actor ? actor.member.id : null,
    );
    await audit(tx, actor, now, {
      brandId: input.brandId,
      action: "invitation.created",
      targetId: invitation.id,
      targetName: email,
      detail: `Invited ${email} as ${invitation.role}.`,
    });
    return { invitation, token };
  });
}

const NO_INVITATION =
  "This invitation link is not valid: it was used, revoked or has expired. Ask an owner of the brand (or the operator) for a new one.";

export async function inspectInvitation(
  ctx: MembersContext,
  token: string,
): Promise<{ invitation: Invitation; brand: Brand }> {
  const invitation = await findOpenInvitation(ctx.db, sha256Hex(token), ctx.clock());
  const brand = invitation && (await findBrand(ctx.db, invitation.brandId));
  if (!invitation || !brand) throw new ApiError("not_found", NO_INVITATION);
  return { invitation, brand };
}

export async function revokeInvitation(ctx: MembersContext, actor: MemberActor, id: string): Promise<void> {
  const now = ctx.clock();
  await ctx.db.transaction(async (tx) => {
    const revoked = await markInvitation(tx, id, "revoked_at", now, actor.member.brandId);
    if (!revoked) throw new ApiError("not_found", `No open invitation with id ${id}.`);
    await audit(tx, actor, now, {
      brandId: actor.member.brandId,
      action: "invitation.revoked",
      targetId: id,
      targetName: revoked.email,
      detail: `Revoked the invitation of ${revoked.email}.`,
    });
  });
}

/** The brand's open invitations, oldest first, as many as the cap allows (older data may hold more). */
export function openInvitations(ctx: MembersContext, brandId: string): Promise<Invitation[]> {
  return listOpenInvitations(ctx.db, brandId, ctx.clock(), brandCaps.openInvitations);
}

/** Uses up the invitation, makes the member and signs them in (from `client`). */
export async function acceptInvitation(
  ctx: MembersContext,
  token: string,
  password: string,
  client: SessionClient,
): Promise<SignedIn> {
  const preview = await inspectInvitation(ctx, token);
  refuseWeakPassword(password, preview.invitation.email);
  // Hashed before the transaction: argon2 takes a while and the embedded database has one connection.
  const passwordHash = await hashPassword(password);
  const now = ctx.clock();
  return ctx.db.transaction(async (tx) => {
    const invitation = await lockOpenInvitation(tx, sha256Hex(token), now);
    if (!invitation) throw new ApiError("not_found", NO_INVITATION);
    const taken = () => new ApiError("member_exists", `${invitation.email} already belongs to a member of this brand.`);
    if (await findMemberByEmail(tx, invitation.brandId, invitation.email)) throw taken();
    await lockBrandForCreation(tx, invitation.brandId);
    await refuseMemberOverCap(tx, invitation.brandId);
    await markInvitation(tx, invitation.id, "used_at", now);
    const member = await insertMember(tx, {
      id: randomUUID(),
      brandId: invitation.brandId,
      email: invitation.email,
      role: invitation.role,
      passwordHash,
      createdAt: now,
    });
    // Another invitation of the brand for the email was accepted while this one was checked.
    if (!member) throw taken();
    await audit(tx, { member, address: client.address }, now, {
      brandId: member.brandId,
      action: "member.joined",
      targetId: member.id,
      targetName: member.email,
      detail: `${member.email} accepted the invitation as ${member.role}.`,
    });
    return startSession(ctx, tx, member, now, client);
  });
}
