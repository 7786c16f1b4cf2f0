/**
 * TOTP codes accepted once (the last used time step is stored), recovery codes, and the TOTP
 * secrets sealed at rest (domain/secret-box.ts).
 */
import { verify } from "otplib";
import type { SecretBox } from "../../domain/secret-box.ts";
import { sha256Hex } from "../../domain/secrets.ts";
import type { Database, Queryable } from "../../store/database.ts";
import {
  claimTotpStep,
  resealTotpSecrets,
  storedTotpSecrets,
  useRecoveryCode,
} from "../../store/member-credentials.ts";
import type { Member } from "../../domain/types.ts";

const SIX_DIGITS = /^\d{6}$/;
const TOTP_PERIOD_S = 30;
const digitsOf = (code: string) => code.replace(/\s+/g, "");

/** The time step `code` (spaces allowed) is the code of, one step of drift either way; null when it matches none. */
export async function totpStep(secret: string, code: string, now: Date): Promise<number | null> {
  const digits = digitsOf(code);
  // otplib throws on anything but six digits: that is simply a wrong code.
  if (!SIX_DIGITS.test(digits)) return null;
  const epoch = Math.floor(now.getTime() / 1000);
  const result = await verify({ secret, token: digits, epoch, epochTolerance: TOTP_PERIOD_S });
  return result.valid ? Math.floor(epoch / TOTP_PERIOD_S) + result.delta : null;
}

export type SecondFactor = "totp" | "recovery_code";

/**
 * Which second factor `code` is, once used up: the current TOTP code (its step claimed, so the same
 * code never works twice) or an unused recovery code; null when it is neither.
 */
export async function useSecondFactor(
  db: Queryable,
  box: SecretBox,
  member: Member,
  code: string,
  now: Date,
): Promise<SecondFactor | null> {
  if (!member.totpSecret) return null;
  if (SIX_DIGITS.test(digitsOf(code))) {
    const step = await totpStep(box.open(member.totpSecret), code, now);
    return step !== null && (await claimTotpStep(db, member.id, step)) ? "totp" : null;
  }
  return (await useRecoveryCode(db, member.id, sha256Hex(code.trim().toLowerCase()), now)) ? "recovery_code" : null;
}

/** Seals every TOTP secret stored in plain or under an older key with the current key (at start-up). */
export async function resealStoredSecrets(db: Database, box: SecretBox): Promise<number> {
  let resealed = 0;
  for (const stored of await storedTotpSecrets(db)) {
    const stale = [stored.totpSecret, stored.totpPending].some((value) => value !== null && box.stale(value));
    if (!stale) continue;
    const reseal = (value: string | null) => (value === null ? null : box.seal(box.open(value)));
    await resealTotpSecrets(db, stored.id, stored, {
      totpSecret: reseal(stored.totpSecret),
      totpPending: reseal(stored.totpPending),
    });
    resealed++;
  }
  return resealed;
}
