/**
 * Credentials: what proves who a member is (a password, a TOTP code, a recovery code), the
 * throttled checks of them at sign-in and before a sensitive change, and changing them.
 */
import argon2 from "argon2";
import { generateSecret, generateURI } from "otplib";
import { ApiError } from "../../domain/errors.ts";
import { passwordProblem } from "../../domain/passwords.ts";
import { normalEmail, recoveryCode, sha256Hex } from "../../domain/secrets.ts";
import type { Queryable } from "../../store/database.ts";
import { findBrand } from "../../store/brands.ts";
import { usePasswordResets, usePasswordResetsIssuedBy } from "../../store/password-resets.ts";
import { revokeSession, revokeSessions } from "../../store/dashboard-sessions.ts";
import { replaceRecoveryCodes } from "../../store/member-credentials.ts";
import { findMembersByEmail, lockMemberById, updateMember } from "../../store/members.ts";
import type { Member } from "../../domain/types.ts";
import type { MemberActor, MembersContext } from "./context.ts";
import { audit } from "./membership.ts";
import { type SessionClient, type SignedIn, startSession } from "./sessions.ts";
import { type Attempt, checkIncomplete, checkSucceeded, reserveCheck, throttleKey } from "./sign-in-throttle.ts";
import { type SecondFactor, totpStep, useSecondFactor } from "./two-factor.ts";

const RECOVERY_CODES = 10;
const TOTP_ISSUER = "Live Stream Hosting";

export function refuseWeakPassword(password: string, email: string): void {
  const problem = passwordProblem(password, { email });
  if (problem) throw new ApiError("weak_password", problem);
}

export const hashPassword = (password: string) => argon2.hash(password, { type: argon2.argon2id });

/**
 * Email, password and (with two-factor on) a TOTP or recovery code. A member is an email within one
 * brand: the password picks the member among the email's (of `brandId` alone when given). Each
 * member's check is reserved by that member's throttle (sign-in-throttle.ts) before it runs; a
 * member whose throttle refuses is not checked, so a member of another brand with the same email
 * (whoever made it, whatever its password) never lifts or bypasses this member's ceiling. Failures
 * are audited only where the sign-in named its member (one membership, or `brandId`), so no brand
 * learns of sign-ins meant for another; refusals and recovery-code sign-ins in the member's brand.
 */
export async function signIn(
  ctx: MembersContext,
  input: {
    email: string;
    password: string;
    totpCode?: string | undefined;
    brandId?: string | undefined;
    /** The browser's device token (its device cookie), if it sent one: the throttle's. */
    device?: string | undefined;
  } & SessionClient,
): Promise<SignedIn> {
  const email = normalEmail(input.email);
  const { address } = input;
  const now = ctx.clock();
  const members = await findMembersByEmail(ctx.db, email, input.brandId);
  if (members.length === 0) {
    // An email no member has: throttled and hashed as a real one, so neither tells it apart.
    await reserveOrRefuse(ctx, null, email, address, now, input.device);
    await hashPassword(input.password);
    throw new ApiError("invalid_credentials");
  }
  const tried = await reserveEach(ctx, members, address, now, input.device);
  // The checks run at once (argon2 works off the main thread): the time hardly tells how many.
  const matches = await Promise.all(tried.map(({ member }) => argon2.verify(member.passwordHash, input.password)));
  const holders = tried.filter((_, i) => matches[i]);
  // Those whose password it is not keep their attempt counted as a failure.
  if (holders.length > 1) {
    for (const { member, attempt } of holders) await checkIncomplete(ctx.db, member.id, address, attempt);
    throw await brandRequired(
      ctx,
      holders.map(({ member }) => member),
    );
  }
  const named = members.length === 1;
  const holder = holders[0];
  if (!holder) return failCheck(ctx, named ? tried.map(({ member }) => member) : [], address, now, "password");
  const { member, attempt } = holder;
  let factor: SecondFactor | null = null;
  if (member.totpSecret) {
    if (!input.totpCode) {
      await checkIncomplete(ctx.db, member.id, address, attempt);
      throw new ApiError("totp_required");
    }
    factor = await useSecondFactor(ctx.db, ctx.totpBox, member, input.totpCode, now);
    if (!factor) return failCheck(ctx, [member], address, now, "second factor");
  }
  return ctx.db.transaction(async (tx) => {
    // The credentials were checked outside the transaction: a password change or reset (or a
    // change of two-factor) that committed since wins, and no session outlives it. The row lock
    // waits for one still running.
    const current = await lockMemberById(tx, member.id);
    if (!current || current.passwordHash !== member.passwordHash || current.totpSecret !== member.totpSecret)
      throw new ApiError("invalid_credentials");
    await checkSucceeded(tx, member.id, address, attempt);
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

/**
 * Reserves a check of each member by its own throttle; those refused are left out. When every one
 * is refused the sign-in is (429, the first member's refusal).
 */
async function reserveEach(
  ctx: MembersContext,
  members: readonly Member[],
  address: string,
  now: Date,
  device: string | undefined,
): Promise<Array<{ member: Member; attempt: Attempt }>> {
  const tried: Array<{ member: Member; attempt: Attempt }> = [];
  let refusal: unknown = null;
  for (const member of members) {
    try {
      tried.push({ member, attempt: await reserveOrRefuse(ctx, member, member.email, address, now, device) });
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== "rate_limited") throw error;
      refusal ??= error;
    }
  }
  if (tried.length === 0) throw refusal;
  return tried;
}

/** The email and password fit members of several brands: the caller, who knows them, is told which. */
async function brandRequired(ctx: MembersContext, holders: readonly Member[]): Promise<ApiError> {
  const brands = await Promise.all(holders.map((member) => findBrand(ctx.db, member.brandId)));
  const named = holders.map((member, i) => `${brands[i]?.name ?? "a brand"} (brand_id ${member.brandId})`);
  return new ApiError(
    "brand_required",
    `This email and password are those of members of ${holders.length} brands: ${named.join(", ")}. Sign in again with the brand_id of one of them.`,
  );
}

/**
 * The attempt's reservation for `member` (or, null, for an email no member has), or 429: the first
 * refusal of a run audited in the member's brand. `device` is the browser's device token: a browser
 * known for the member is not held back by the account's ceiling.
 */
async function reserveOrRefuse(
  ctx: MembersContext,
  member: Member | null,
  email: string,
  address: string,
  now: Date,
  device: string | undefined,
): Promise<Attempt> {
  const attempt = await reserveCheck(ctx.db, throttleKey(member, email), address, now, device);
  if (attempt.allowed) return attempt;
  const seconds = Math.max(1, Math.ceil((attempt.until.getTime() - now.getTime()) / 1000));
  if (member && attempt.firstRefusal) {
    const whose = {
      address: `from ${address}`,
      device: `from a browser signed in on before (at ${address})`,
      account: "from browsers not signed in on before, all addresses together",
    }[attempt.by];
    await audit(ctx.db, { address }, now, {
      brandId: member.brandId,
      action: "session.sign_in_throttled",
      targetId: member.id,
      targetName: member.email,
      detail: `Sign-ins for ${email} refused for ${seconds} s after ${attempt.failures} failed attempts ${whose}.`,
    });
  }
  const refusal = {
    address: `Too many failed sign-ins for this account from your address. Wait ${seconds} s and try again, or ask an owner of the brand (or the operator) for a password-reset link.`,
    device: `Too many failed sign-ins for this account from this browser. Wait ${seconds} s and try again, or ask an owner of the brand (or the operator) for a password-reset link.`,
    account: `Too many failed sign-ins for this account from browsers it was not signed in on before. Sign in from a browser you have signed in on before, wait ${seconds} s and try again, or ask an owner of the brand (or the operator) to unlock the account or for a password-reset link.`,
  }[attempt.by];
  throw new ApiError("rate_limited", refusal);
}

/** A wrong password or code: audited in the brand of each member it was meant for. */
async function failCheck(
  ctx: MembersContext,
  members: readonly Member[],
  address: string,
  now: Date,
  what: "password" | "second factor",
): Promise<never> {
  for (const member of members)
    await audit(ctx.db, { address }, now, {
      brandId: member.brandId,
      action: "session.sign_in_failed",
      targetId: member.id,
      targetName: member.email,
      detail: `A sign-in for ${member.email} from ${address} failed: wrong ${what}.`,
    });
  throw new ApiError("invalid_credentials");
}

/** What proves it is the member: the password, the second factor if on, and the browser's device token if it sent one (the throttle's). */
export interface IdentityProof {
  password: string;
  code?: string | undefined;
  device?: string | undefined;
}

/**
 * A signed-in member proves it is them before a sensitive change: the password and, with two-factor
 * on, the current TOTP code or a recovery code. Throttled and audited like a sign-in.
 */
export async function confirmIdentity(
  ctx: MembersContext,
  member: Member,
  proof: IdentityProof,
  address: string,
): Promise<void> {
  const now = ctx.clock();
  const attempt = await reserveOrRefuse(ctx, member, member.email, address, now, proof.device);
  if (!(await argon2.verify(member.passwordHash, proof.password)))
    await failCheck(ctx, [member], address, now, "password");
  if (member.totpSecret) {
    if (!proof.code) {
      await checkIncomplete(ctx.db, member.id, address, attempt);
      throw new ApiError("totp_required");
    }
    if (!(await useSecondFactor(ctx.db, ctx.totpBox, member, proof.code, now)))
      await failCheck(ctx, [member], address, now, "second factor");
  }
  await checkSucceeded(ctx.db, member.id, address, attempt);
}

/**
 * Making someone an owner (an invitation as owner, a promotion) needs the acting owner's proof, as
 * a reset link does: an owner can issue reset links, so a session taken over must not make one.
 */
export async function proveOwnerGrant(
  ctx: MembersContext,
  actor: MemberActor,
  role: string,
  proof: { password?: string | undefined; code?: string | undefined; device?: string | undefined },
): Promise<void> {
  if (role !== "owner") return;
  if (proof.password === undefined)
    throw new ApiError(
      "invalid_credentials",
      "Making an owner needs your own password (password, and totp_code with two-factor on).",
    );
  await confirmIdentity(ctx, actor.member, { ...proof, password: proof.password }, actor.address);
}

/** Sets a new password, ends the member's other sessions and reset links, and gives this session a new id. */
export async function changePassword(
  ctx: MembersContext,
  current: { sessionId: string; member: Member },
  input: {
    currentPassword: string;
    newPassword: string;
    totpCode?: string | undefined;
    device?: string | undefined;
  } & SessionClient,
): Promise<{ signedIn: SignedIn; revoked: number }> {
  const { member } = current;
  await confirmIdentity(
    ctx,
    member,
    { password: input.currentPassword, code: input.totpCode, device: input.device },
    input.address,
  );
  refuseWeakPassword(input.newPassword, member.email);
  const passwordHash = await hashPassword(input.newPassword);
  const now = ctx.clock();
  return ctx.db.transaction(async (tx) => {
    await updateMember(tx, member.id, { passwordHash });
    await usePasswordResets(tx, member.id, now);
    await usePasswordResetsIssuedBy(tx, member.id, now);
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

/** A new, unconfirmed TOTP secret: needs the password, so a session taken over cannot enrol its own authenticator. */
export async function startTotp(
  ctx: MembersContext,
  member: Member,
  proof: IdentityProof,
  address: string,
): Promise<{ secret: string; otpauthUrl: string }> {
  if (member.totpSecret) throw new ApiError("totp_enabled");
  await confirmIdentity(ctx, member, proof, address);
  const secret = generateSecret();
  await updateMember(ctx.db, member.id, { totpPending: ctx.totpBox.seal(secret) });
  return { secret, otpauthUrl: generateURI({ issuer: TOTP_ISSUER, label: member.email, secret }) };
}

export async function confirmTotp(ctx: MembersContext, actor: MemberActor, code: string): Promise<string[]> {
  const { member } = actor;
  if (member.totpSecret) throw new ApiError("totp_enabled");
  if (!member.totpPending)
    throw new ApiError("invalid_fields", "Start two-factor enrolment first (POST /account/totp).");
  const now = ctx.clock();
  const step = await totpStep(ctx.totpBox.open(member.totpPending), code, now);
  if (step === null)
    throw new ApiError(
      "invalid_credentials",
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
  proof: IdentityProof,
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
  proof: IdentityProof,
  address: string,
): Promise<string[]> {
  if (!member.totpSecret)
    throw new ApiError("invalid_fields", "Two-factor is off: there are no recovery codes to replace.");
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
