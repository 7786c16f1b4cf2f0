import { randomUUID } from "node:crypto";
import argon2 from "argon2";
import { generateSecret, generateURI } from "otplib";
import { brandCaps } from "../../generated/limits.ts";
import { DomainError } from "../domain/errors.ts";
import { passwordProblem } from "../domain/passwords.ts";
import type { SecretBox } from "../domain/secret-box.ts";
import { normalEmail, randomToken, recoveryCode, sha256Hex } from "../domain/secrets.ts";
import type { AuditAction, Brand, Mode } from "../domain/types.ts";
import { findBrand } from "../store/brands.ts";
import type { Database, Queryable } from "../store/database.ts";
import {
  type AuditEntry,
  type AuditFilter,
  countAuditEntries,
  emailTaken,
  findMember,
  findMemberByEmail,
  findOpenInvitation,
  findSession,
  insertAuditEntry,
  insertInvitation,
  insertMember,
  insertSession,
  type Invitation,
  listAuditEntries,
  listMembers,
  listOpenInvitations,
  lockOwners,
  markInvitation,
  type Member,
  replaceRecoveryCodes,
  revokeInvitationsBy,
  revokeSession,
  revokeSessions,
  type Role,
  type SessionRecord,
  touchSession,
  updateMember,
} from "../store/members.ts";
import { lockBrandForCreation, refuseInvitationOverCap, refuseMemberOverCap } from "./brand-caps.ts";
import type { Clock } from "./context.ts";
import { type Attempt, checkIncomplete, checkSucceeded, reserveCheck } from "./sign-in-throttle.ts";
import { type SecondFactor, totpStep, useSecondFactor } from "./two-factor.ts";

export type { AuditFilter, Member, Role } from "../store/members.ts";
export type { AuditAction } from "../domain/types.ts";

export const INVITATION_TTL_MS = 72 * 60 * 60 * 1000;
/** A session's last use is written at most this often (not on every request). */
const TOUCH_EVERY_MS = 60 * 1000;
const RECOVERY_CODES = 10;
const TOTP_ISSUER = "Live Stream Hosting";

export interface MembersContext {
  db: Database;
  clock: Clock;
  sessionIdleMs: number;
  sessionAbsoluteMs: number;
  /** Seals TOTP secrets at rest (TOTP_ENCRYPTION_KEY). */
  totpBox: SecretBox;
}

/** A signed-in member acting, from the client address of their request. */
export type MemberActor = { member: Member; address: string };
/** The operator (its API and CLI), from the client address of its request. */
export type OperatorActor = { operator: true; address: string };

/**
 * Who did something, for the audit log: a signed-in member, the operator, or a client not signed
 * in; each with the client address of the request (`http/client-address.ts`), which every entry
 * records.
 */
export type Actor = MemberActor | OperatorActor | { address: string };

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

// ---------------------------------------------------------------- invitations

export interface InvitationCreated {
  invitation: Invitation;
  token: string;
}

/** A one-time invitation to the brand; the token is returned once and only its hash stored. */
export async function invite(
  ctx: MembersContext,
  actor: Actor,
  input: { brandId: string; email: string; role?: Role },
): Promise<InvitationCreated> {
  const email = normalEmail(input.email);
  const now = ctx.clock();
  return ctx.db.transaction(async (tx) => {
    await lockBrandForCreation(tx, input.brandId);
    // Only this brand's members are refused: another brand's answers as a fresh invitation, so an
    // inviter learns nothing of who belongs elsewhere (the link then cannot be accepted).
    if ((await findMemberByEmail(tx, email))?.brandId === input.brandId)
      throw new DomainError("member_exists", `${email} is already a member of this brand.`);
    await refuseInvitationOverCap(tx, input.brandId, now);
    const token = randomToken();
    const invitation = await insertInvitation(
      tx,
      {
        id: randomUUID(),
        brandId: input.brandId,
        email,
        role: input.role ?? "owner",
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
  if (!invitation || !brand) throw new DomainError("not_found", NO_INVITATION);
  return { invitation, brand };
}

export async function revokeInvitation(ctx: MembersContext, actor: MemberActor, id: string): Promise<void> {
  const now = ctx.clock();
  await ctx.db.transaction(async (tx) => {
    const revoked = await markInvitation(tx, id, "revoked_at", now, actor.member.brandId);
    if (!revoked) throw new DomainError("not_found", `No open invitation with id ${id}.`);
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

export function refuseWeakPassword(password: string, email: string): void {
  const problem = passwordProblem(password, { email });
  if (problem) throw new DomainError("weak_password", problem);
}

export const hashPassword = (password: string) => argon2.hash(password, { type: argon2.argon2id });

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
    const invitation = await findOpenInvitation(tx, sha256Hex(token), now, { forUpdate: true });
    if (!invitation) throw new DomainError("not_found", NO_INVITATION);
    const taken = () => new DomainError("member_exists", `${invitation.email} already belongs to a member.`);
    if (await emailTaken(tx, invitation.email)) throw taken();
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
    // Another invitation for the email was accepted while this one was checked.
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

// ---------------------------------------------------------------- sessions

export interface SignedIn {
  /** The cookie's value; only its hash is stored. */
  sessionId: string;
  session: SessionRecord;
  member: Member;
}

/** Where a session is begun from: the client address of the request and the browser's User-Agent. */
export interface SessionClient {
  address: string;
  userAgent: string | null;
}

async function startSession(
  ctx: MembersContext,
  db: Queryable,
  member: Member,
  now: Date,
  client: SessionClient,
): Promise<SignedIn> {
  const sessionId = randomToken();
  const session: SessionRecord = {
    publicId: randomUUID(),
    memberId: member.id,
    csrfToken: randomToken(),
    createdAt: now,
    lastSeenAt: now,
    expiresAt: new Date(now.getTime() + ctx.sessionAbsoluteMs),
    userAgent: client.userAgent,
    address: client.address,
  };
  await insertSession(db, sha256Hex(sessionId), session);
  await updateMember(db, member.id, { lastSignInAt: now });
  return { sessionId, session, member: { ...member, lastSignInAt: now } };
}

/** When the session ends if unused from now: the idle expiry, capped by the absolute one. */
export function sessionExpiry(ctx: Pick<MembersContext, "sessionIdleMs">, session: SessionRecord): Date {
  return new Date(Math.min(session.lastSeenAt.getTime() + ctx.sessionIdleMs, session.expiresAt.getTime()));
}

/**
 * The session the cookie names, if it is live (neither idle too long nor past its absolute end);
 * its use is recorded, with the client address it came from.
 */
export async function currentSession(
  ctx: MembersContext,
  sessionId: string,
  address: string,
): Promise<{ session: SessionRecord; member: Member } | null> {
  const now = ctx.clock();
  const idHash = sha256Hex(sessionId);
  const found = await findSession(ctx.db, idHash, now);
  if (!found) return null;
  if (sessionExpiry(ctx, found.session) <= now) {
    await revokeSession(ctx.db, idHash, now);
    return null;
  }
  if (now.getTime() - found.session.lastSeenAt.getTime() >= TOUCH_EVERY_MS) {
    await touchSession(ctx.db, idHash, now, address);
    found.session.lastSeenAt = now;
    found.session.address = address;
  }
  return found;
}

/**
 * Email, password and (with two-factor on) a TOTP or recovery code. Each attempt is reserved by the
 * throttle (services/sign-in-throttle.ts) before the password is checked; failures, refusals and
 * recovery-code sign-ins are audited with the client's address.
 */
export async function signIn(
  ctx: MembersContext,
  input: { email: string; password: string; totpCode?: string | undefined } & SessionClient,
): Promise<SignedIn> {
  const email = normalEmail(input.email);
  const { address } = input;
  const now = ctx.clock();
  const attempt = await reserveOrRefuse(ctx, email, address, now);
  const member = await findMemberByEmail(ctx.db, email);
  // A missing member costs a hash too, so the answer's timing does not tell which emails exist.
  const passwordOk = member
    ? await argon2.verify(member.passwordHash, input.password)
    : (await hashPassword(input.password), false);
  if (!member || !passwordOk) return failCheck(ctx, member, address, now, "password");
  let factor: SecondFactor | null = null;
  if (member.totpSecret) {
    if (!input.totpCode) {
      await checkIncomplete(ctx.db, email, address, attempt);
      throw new DomainError("second_factor_required");
    }
    factor = await useSecondFactor(ctx.db, ctx.totpBox, member, input.totpCode, now);
    if (!factor) return failCheck(ctx, member, address, now, "second factor");
  }
  return ctx.db.transaction(async (tx) => {
    await checkSucceeded(tx, email, address, attempt);
    const signedIn = await startSession(ctx, tx, member, now, input);
    const withCode = factor === "recovery_code";
    await audit(tx, { member, address }, now, {
      brandId: member.brandId,
      action: withCode ? "session.signed_in_with_recovery_code" : "session.signed_in",
      targetId: member.id,
      targetName: member.email,
      detail: `${member.email} signed in from ${address}${withCode ? " with a recovery code" : ""}.`,
    });
    return signedIn;
  });
}

/** The attempt's reservation, or 429 (the first refusal of a run audited against the member's brand). */
async function reserveOrRefuse(ctx: MembersContext, email: string, address: string, now: Date): Promise<Attempt> {
  const attempt = await reserveCheck(ctx.db, email, address, now);
  if (attempt.allowed) {
    if (attempt.slowdownMs > 0) await new Promise((resolve) => setTimeout(resolve, attempt.slowdownMs));
    return attempt;
  }
  const seconds = Math.max(1, Math.ceil((attempt.until.getTime() - now.getTime()) / 1000));
  const member = attempt.firstRefusal ? await findMemberByEmail(ctx.db, email) : null;
  if (member) {
    const whose = attempt.by === "address" ? `from ${address}` : "from all addresses together";
    await audit(ctx.db, { address }, now, {
      brandId: member.brandId,
      action: "session.sign_in_throttled",
      targetId: member.id,
      targetName: member.email,
      detail: `Sign-ins for ${email} refused for ${seconds} s after ${attempt.failures} failed attempts ${whose}.`,
    });
  }
  throw new DomainError(
    "sign_in_throttled",
    `Too many failed sign-ins for this account${attempt.by === "address" ? " from your address" : ""}. Wait ${seconds} s and try again, or ask an owner of the brand (or the operator) for a password-reset link.`,
  );
}

async function failCheck(
  ctx: MembersContext,
  member: Member | null,
  address: string,
  now: Date,
  what: "password" | "second factor",
): Promise<never> {
  if (member)
    await audit(ctx.db, { address }, now, {
      brandId: member.brandId,
      action: "session.sign_in_failed",
      targetId: member.id,
      targetName: member.email,
      detail: `A sign-in for ${member.email} from ${address} failed: wrong ${what}.`,
    });
  throw new DomainError("wrong_credentials");
}

export async function signOut(ctx: MembersContext, sessionId: string): Promise<void> {
  await revokeSession(ctx.db, sha256Hex(sessionId), ctx.clock());
}

export async function signOutEverywhere(ctx: MembersContext, actor: MemberActor): Promise<number> {
  const { member } = actor;
  const now = ctx.clock();
  return ctx.db.transaction(async (tx) => {
    const count = await revokeSessions(tx, member.id, now);
    await audit(tx, actor, now, {
      brandId: member.brandId,
      action: "session.signed_out_everywhere",
      targetId: member.id,
      targetName: member.email,
      detail: `Ended ${count} session(s).`,
    });
    return count;
  });
}

/**
 * A signed-in member proves it is them before a sensitive change: the password and, with two-factor
 * on, the current TOTP code or a recovery code. Throttled and audited like a sign-in.
 */
async function confirmIdentity(
  ctx: MembersContext,
  member: Member,
  proof: { password: string; code?: string | undefined },
  address: string,
): Promise<void> {
  const now = ctx.clock();
  const attempt = await reserveOrRefuse(ctx, member.email, address, now);
  if (!(await argon2.verify(member.passwordHash, proof.password)))
    await failCheck(ctx, member, address, now, "password");
  if (member.totpSecret) {
    if (!proof.code) {
      await checkIncomplete(ctx.db, member.email, address, attempt);
      throw new DomainError("second_factor_required");
    }
    if (!(await useSecondFactor(ctx.db, ctx.totpBox, member, proof.code, now)))
      await failCheck(ctx, member, address, now, "second factor");
  }
  await checkSucceeded(ctx.db, member.email, address, attempt);
}

/** Sets a new password, ends the member's other sessions and gives this one a new id. */
export async function changePassword(
  ctx: MembersContext,
  current: { sessionId: string; member: Member },
  input: { currentPassword: string; newPassword: string; totpCode?: string | undefined } & SessionClient,
): Promise<{ signedIn: SignedIn; revoked: number }> {
  const { member } = current;
  await confirmIdentity(ctx, member, { password: input.currentPassword, code: input.totpCode }, input.address);
  refuseWeakPassword(input.newPassword, member.email);
  const passwordHash = await hashPassword(input.newPassword);
  const now = ctx.clock();
  return ctx.db.transaction(async (tx) => {
    await updateMember(tx, member.id, { passwordHash });
    const revoked = await revokeSessions(tx, member.id, now, { except: sha256Hex(current.sessionId) });
    await revokeSession(tx, sha256Hex(current.sessionId), now);
    const signedIn = await startSession(ctx, tx, { ...member, passwordHash }, now, input);
    await audit(tx, { member, address: input.address }, now, {
      brandId: member.brandId,
      action: "member.password_changed",
      targetId: member.id,
      targetName: member.email,
      detail: `Password changed; ${revoked} other session(s) ended.`,
    });
    return { signedIn, revoked };
  });
}

// ---------------------------------------------------------------- two-factor

export async function startTotp(ctx: MembersContext, member: Member): Promise<{ secret: string; otpauthUrl: string }> {
  if (member.totpSecret) throw new DomainError("second_factor_enabled");
  const secret = generateSecret();
  await updateMember(ctx.db, member.id, { totpPending: ctx.totpBox.seal(secret) });
  return { secret, otpauthUrl: generateURI({ issuer: TOTP_ISSUER, label: member.email, secret }) };
}

export async function confirmTotp(ctx: MembersContext, actor: MemberActor, code: string): Promise<string[]> {
  const { member } = actor;
  if (member.totpSecret) throw new DomainError("second_factor_enabled");
  if (!member.totpPending) throw new DomainError("conflict", "Start two-factor enrolment first (POST /account/totp).");
  const now = ctx.clock();
  const step = await totpStep(ctx.totpBox.open(member.totpPending), code, now);
  if (step === null)
    throw new DomainError(
      "wrong_credentials",
      "The code does not match; check the authenticator app's clock and try the current code.",
    );
  const codes = Array.from({ length: RECOVERY_CODES }, recoveryCode);
  await ctx.db.transaction(async (tx) => {
    // The confirming code is used: it cannot sign in afterwards.
    await updateMember(tx, member.id, { totpSecret: member.totpPending, totpPending: null, totpLastStep: step });
    await storeRecoveryCodes(tx, member.id, codes);
    await audit(tx, actor, now, {
      brandId: member.brandId,
      action: "member.totp_enabled",
      targetId: member.id,
      targetName: member.email,
      detail: "Two-factor authentication turned on.",
    });
  });
  return codes;
}

/** Replaces a member's recovery codes with `codes`, of which only the hashes are kept. */
function storeRecoveryCodes(tx: Queryable, memberId: string, codes: string[]): Promise<void> {
  return replaceRecoveryCodes(
    tx,
    memberId,
    codes.map((one) => sha256Hex(one)),
  );
}

export async function disableTotp(
  ctx: MembersContext,
  member: Member,
  proof: { password: string; code?: string | undefined },
  address: string,
): Promise<Member> {
  await confirmIdentity(ctx, member, proof, address);
  const now = ctx.clock();
  await ctx.db.transaction(async (tx) => {
    await updateMember(tx, member.id, { totpSecret: null, totpPending: null, totpLastStep: null });
    await replaceRecoveryCodes(tx, member.id, []);
    await audit(tx, { member, address }, now, {
      brandId: member.brandId,
      action: "member.totp_disabled",
      targetId: member.id,
      targetName: member.email,
      detail: "Two-factor authentication turned off.",
    });
  });
  return { ...member, totpSecret: null, totpPending: null };
}

/** New recovery codes in place of the old ones: needs the password and the current second factor. */
export async function regenerateRecoveryCodes(
  ctx: MembersContext,
  member: Member,
  proof: { password: string; code?: string | undefined },
  address: string,
): Promise<string[]> {
  if (!member.totpSecret)
    throw new DomainError("conflict", "Two-factor is off: there are no recovery codes to replace.");
  await confirmIdentity(ctx, member, proof, address);
  const now = ctx.clock();
  const codes = Array.from({ length: RECOVERY_CODES }, recoveryCode);
  await ctx.db.transaction(async (tx) => {
    await storeRecoveryCodes(tx, member.id, codes);
    await audit(tx, { member, address }, now, {
      brandId: member.brandId,
      action: "member.recovery_codes_replaced",
      targetId: member.id,
      targetName: member.email,
      detail: "New recovery codes; the old ones no longer work.",
    });
  });
  return codes;
}

// ---------------------------------------------------------------- members

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
    const target = await findMember(tx, actor.member.brandId, memberId, { forUpdate: true });
    if (!target) throw new DomainError("not_found", `No member with id ${memberId}.`);
    if (target.role === "owner" && role !== "owner" && owners.length <= 1) throw new DomainError("last_owner");
    await updateMember(tx, target.id, { role });
    const revoked = role === "owner" ? 0 : await revokeInvitationsBy(tx, target.id, now);
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
    const target = await findMember(tx, actor.member.brandId, memberId, { forUpdate: true });
    if (!target) throw new DomainError("not_found", `No member with id ${memberId}.`);
    if (target.role === "owner" && owners.length <= 1) throw new DomainError("last_owner");
    await updateMember(tx, target.id, { removedAt: now });
    await revokeSessions(tx, target.id, now);
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
  if (!brand) throw new DomainError("not_found", "The member's brand no longer exists.");
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
