/**
 * Membership: who belongs to a brand and in which role, and the brand's audit log, which every
 * change to an account or a key writes through `audit`.
 */
import { randomUUID } from "node:crypto";
import { brandCaps } from "../../../generated/limits.ts";
import { ApiError } from "../../domain/errors.ts";
import type { AuditAction, Brand, Mode } from "../../domain/types.ts";
import { findBrand } from "../../store/brands.ts";
import type { Queryable } from "../../store/database.ts";
import { type AuditFilter, countAuditEntries, insertAuditEntry, listAuditEntries } from "../../store/audit-log.ts";
import { revokeSessions } from "../../store/dashboard-sessions.ts";
import { revokeInvitationsBy } from "../../store/invitations.ts";
import { listMembers, lockMember, lockOwners, updateMember } from "../../store/members.ts";
import type { AuditEntry, Member, Role } from "../../domain/types.ts";
import { usePasswordResetsIssuedBy } from "../../store/password-resets.ts";
import type { Actor, MemberActor, MembersContext } from "./context.ts";

export type { AuditFilter } from "../../store/audit-log.ts";
export type { AuditAction } from "../../domain/types.ts";

const actorName = (actor: Actor) =>
  "member" in actor ? actor.member.email : "operator" in actor ? "operator" : `client ${actor.address}`;

export interface AuditInput {
  brandId: string;
  action: AuditAction;
  mode?: Mode | null;
  targetId?: string | null;
  /** What the target is called: a key's name, an email, a product, a device. */
  targetName?: string | null;
  detail: string;
}

export async function audit(db: Queryable, actor: Actor, at: Date, entry: AuditInput): Promise<void> {
  const member = "member" in actor ? actor.member : null;
  const record: AuditEntry = {
    id: randomUUID(),
    brandId: entry.brandId,
    at,
    actor: actorName(actor),
    memberId: member?.id ?? null,
    address: actor.address,
    action: entry.action,
    mode: entry.mode ?? null,
    targetId: entry.targetId ?? null,
    targetName: entry.targetName ?? null,
    detail: entry.detail,
  };
  await insertAuditEntry(db, record);
}

/** The brand's members, oldest first, as many as the cap allows (older data may hold more). */
export function brandMembers(ctx: MembersContext, brandId: string): Promise<Member[]> {
  return listMembers(ctx.db, brandId, brandCaps.members);
}

/** Role changes and removals keep at least one owner. */
export async function changeRole(
  ctx: MembersContext,
  actor: MemberActor,
  memberId: string,
  role: Role,
): Promise<Member> {
  const now = ctx.clock();
  return ctx.db.transaction(async (tx) => {
    const owners = await lockOwners(tx, actor.member.brandId);
    const target = await lockMember(tx, actor.member.brandId, memberId);
    if (!target) throw new ApiError("not_found", `No member with id ${memberId}.`);
    if (target.role === "owner" && role !== "owner" && owners.length <= 1) throw new ApiError("last_owner");
    await updateMember(tx, target.id, { role });
    const revoked = role === "owner" ? 0 : await revokeInvitationsBy(tx, target.id, now);
    // No longer an owner: the reset links they issued die now, and stay dead if made one again.
    if (role !== "owner") await usePasswordResetsIssuedBy(tx, target.id, now);
    await audit(tx, actor, now, {
      brandId: target.brandId,
      action: "member.role_changed",
      targetId: target.id,
      targetName: target.email,
      detail: `${target.email}: ${target.role} → ${role}.${revokedNote(revoked)}`,
    });
    return { ...target, role };
  });
}

export async function removeMember(ctx: MembersContext, actor: MemberActor, memberId: string): Promise<void> {
  const now = ctx.clock();
  await ctx.db.transaction(async (tx) => {
    const owners = await lockOwners(tx, actor.member.brandId);
    const target = await lockMember(tx, actor.member.brandId, memberId);
    if (!target) throw new ApiError("not_found", `No member with id ${memberId}.`);
    if (target.role === "owner" && owners.length <= 1) throw new ApiError("last_owner");
    await updateMember(tx, target.id, { removedAt: now });
    await revokeSessions(tx, target.id, now);
    await usePasswordResetsIssuedBy(tx, target.id, now);
    const revoked = await revokeInvitationsBy(tx, target.id, now);
    await audit(tx, actor, now, {
      brandId: target.brandId,
      action: "member.removed",
      targetId: target.id,
      targetName: target.email,
      detail: `Removed ${target.email}.${revokedNote(revoked)}`,
    });
  });
}

/** Invitations die with their creator's authority (removed, or no longer an owner). */
const revokedNote = (count: number) => (count > 0 ? ` ${count} open invitation(s) they made revoked.` : "");

export async function brandOfMember(ctx: MembersContext, member: Member): Promise<Brand> {
  const brand = await findBrand(ctx.db, member.brandId);
  if (!brand) throw new ApiError("not_found", "The member's brand no longer exists.");
  return brand;
}

/** One page of the brand's audit log matching `filter`, newest first, and how many entries match: owners read it. */
export async function auditLog(
  ctx: MembersContext,
  brandId: string,
  filter: AuditFilter,
  page: { limit: number; offset: number },
): Promise<{ entries: AuditEntry[]; total: number }> {
  const [entries, total] = await Promise.all([
    listAuditEntries(ctx.db, brandId, filter, page),
    countAuditEntries(ctx.db, brandId, filter),
  ]);
  return { entries, total };
}
