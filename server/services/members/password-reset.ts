/**
 * Recovery (docs/dashboard.md, "Recovery"): an owner, or the operator, issues a one-time
 * password-reset link for a member (1 hour; only its hash stored, like invitations) and can lift the
 * member's sign-in throttle. Following the link sets a new password and ends every session.
 * An owner proves it is them to issue one, and only for another member; the link dies with the
 * issuer's right to issue it (store/password-resets.ts) and with the member's own recovery.
 */
import { randomUUID } from "node:crypto";
import { ApiError } from "../../domain/errors.ts";
import { normalEmail, randomToken, sha256Hex } from "../../domain/secrets.ts";
import type { Brand } from "../../domain/types.ts";
import { findBrand } from "../../store/brands.ts";
import { revokeSessions } from "../../store/dashboard-sessions.ts";
import { replaceRecoveryCodes } from "../../store/member-credentials.ts";
import { findMember, findMemberById, findMembersByEmail, lockMemberById, updateMember } from "../../store/members.ts";
import type { Member } from "../../domain/types.ts";
import {
  findOpenPasswordReset,
  insertPasswordReset,
  lockOpenPasswordReset,
  usePasswordResets,
  usePasswordResetsIssuedBy,
} from "../../store/password-resets.ts";
import type { MemberActor, MembersContext, OperatorActor } from "./context.ts";
import { confirmIdentity, hashPassword, type IdentityProof, refuseWeakPassword } from "./credentials.ts";
import { audit } from "./membership.ts";
import { clearThrottle } from "./sign-in-throttle.ts";

export const PASSWORD_RESET_TTL_MS = 60 * 60 * 1000;

/**
 * Whose account: a member of the owner's brand by id, or (the operator) a member by email, in the
 * brand named when the email belongs to members of several.
 */
export type ResetTarget = { brandId: string; memberId: string } | { email: string; brandId?: string | undefined };

async function targetMember(ctx: MembersContext, target: ResetTarget): Promise<Member> {
  if (!("email" in target)) {
    const member = await findMember(ctx.db, target.brandId, target.memberId);
    if (!member) throw new ApiError("not_found", `No member with id ${target.memberId}.`);
    return member;
  }
  const members = await findMembersByEmail(ctx.db, normalEmail(target.email), target.brandId);
  const [member, ...others] = members;
  if (!member)
    throw new ApiError(
      "not_found",
      `No member with email ${target.email}${target.brandId === undefined ? "" : ` in brand ${target.brandId}`}.`,
    );
  if (others.length > 0)
    throw new ApiError(
      "invalid_fields",
      `${target.email} belongs to members of ${members.length} brands (${members.map((one) => one.brandId).join(", ")}): name one with brand_id.`,
    );
  return member;
}

export interface ResetIssued {
  member: Member;
  token: string;
  expiresAt: Date;
}

/**
 * A one-time link for the target member. An owner issues one for another member only (their own
 * password is changed on the Security page, which asks for the current one), and proves it is
 * them first, so a session taken over cannot issue links.
 */
export async function issuePasswordReset(
  ctx: MembersContext,
  actor: MemberActor | OperatorActor,
  target: ResetTarget,
  { turnOffTwoFactor = false, proof }: { turnOffTwoFactor?: boolean; proof?: IdentityProof } = {},
): Promise<ResetIssued> {
  const member = await targetMember(ctx, target);
  if ("member" in actor) {
    if (member.id === actor.member.id)
      throw new ApiError(
        "forbidden",
        "A reset link is for another member: change your own password on the Security page (PUT /account/password).",
      );
    if (!proof) throw new ApiError("invalid_credentials");
    await confirmIdentity(ctx, actor.member, proof, actor.address);
  }
  const now = ctx.clock();
  const token = randomToken();
  const expiresAt = new Date(now.getTime() + PASSWORD_RESET_TTL_MS);
  await ctx.db.transaction(async (tx) => {
    await insertPasswordReset(
      tx,
      {
        id: randomUUID(),
        memberId: member.id,
        issuedBy: "member" in actor ? actor.member.email : "operator",
        issuerMemberId: "member" in actor ? actor.member.id : null,
        turnOffTwoFactor,
        createdAt: now,
        expiresAt,
      },
      sha256Hex(token),
    );
    await audit(tx, actor, now, {
      brandId: member.brandId,
      action: "member.password_reset_issued",
      targetId: member.id,
      targetName: member.email,
      detail: `A password-reset link for ${member.email}, valid 1 hour${turnOffTwoFactor ? ", turning two-factor off" : ""}.`,
    });
  });
  return { member, token, expiresAt };
}

/** Lifts the member's sign-in throttle, from every address. */
export async function clearMemberThrottle(
  ctx: MembersContext,
  actor: MemberActor | OperatorActor,
  target: ResetTarget,
): Promise<{ member: Member; cleared: number }> {
  const member = await targetMember(ctx, target);
  const now = ctx.clock();
  return ctx.db.transaction(async (tx) => {
    const cleared = await clearThrottle(tx, member.id);
    await audit(tx, actor, now, {
      brandId: member.brandId,
      action: "member.sign_in_throttle_cleared",
      targetId: member.id,
      targetName: member.email,
      detail: `Cleared the sign-in throttle of ${member.email}.`,
    });
    return { member, cleared };
  });
}

const NO_RESET =
  "This password-reset link is not valid: it was used, has expired (links last 1 hour) or was never issued. Ask an owner of the brand (or the operator) for a new one.";

export async function inspectPasswordReset(
  ctx: MembersContext,
  token: string,
): Promise<{ member: Member; brand: Brand; expiresAt: Date; turnOffTwoFactor: boolean }> {
  const reset = await findOpenPasswordReset(ctx.db, sha256Hex(token), ctx.clock());
  const member = reset && (await findMemberById(ctx.db, reset.memberId));
  const brand = member && (await findBrand(ctx.db, member.brandId));
  if (!reset || !member || !brand) throw new ApiError("not_found", NO_RESET);
  return { member, brand, expiresAt: reset.expiresAt, turnOffTwoFactor: reset.turnOffTwoFactor };
}

/** Sets the new password, uses up the link (and any other of the member's), ends every session and the throttle. */
export async function completePasswordReset(
  ctx: MembersContext,
  token: string,
  password: string,
  address: string,
): Promise<{ member: Member; sessionsRevoked: number }> {
  const preview = await inspectPasswordReset(ctx, token);
  refuseWeakPassword(password, preview.member.email);
  const passwordHash = await hashPassword(password);
  const now = ctx.clock();
  return ctx.db.transaction(async (tx) => {
    const reset = await lockOpenPasswordReset(tx, sha256Hex(token), now);
    const member = reset && (await lockMemberById(tx, reset.memberId));
    if (!reset || !member) throw new ApiError("not_found", NO_RESET);
    await usePasswordResets(tx, member.id, now);
    await usePasswordResetsIssuedBy(tx, member.id, now);
    await updateMember(tx, member.id, {
      passwordHash,
      ...(reset.turnOffTwoFactor ? { totpSecret: null, totpPending: null, totpLastStep: null } : {}),
    });
    if (reset.turnOffTwoFactor) await replaceRecoveryCodes(tx, member.id, []);
    const sessionsRevoked = await revokeSessions(tx, member.id, now);
    await clearThrottle(tx, member.id);
    await audit(tx, { address }, now, {
      brandId: member.brandId,
      action: "member.password_reset",
      targetId: member.id,
      targetName: member.email,
      detail: `${member.email} set a new password with a reset link from ${address}; ${sessionsRevoked} session(s) ended${reset.turnOffTwoFactor ? ", two-factor turned off" : ""}.`,
    });
    return { member, sessionsRevoked };
  });
}
