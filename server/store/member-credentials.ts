/**
 * A member's second factor: the recovery codes (member_recovery_codes) and the TOTP columns of
 * members (the secret, a pending one, the last time step accepted).
 */
import type { Queryable } from "./database.ts";

export async function replaceRecoveryCodes(
  db: Queryable,
  memberId: string,
  codeHashes: readonly string[],
): Promise<void> {
  await db.query(`DELETE FROM member_recovery_codes WHERE member_id = $1`, [memberId]);
  if (codeHashes.length > 0) {
    await db.query(`INSERT INTO member_recovery_codes (member_id, code_hash) SELECT $1, unnest($2::text[])`, [
      memberId,
      codeHashes,
    ]);
  }
}

/** Marks one unused recovery code used; false when there is none with that hash. */
export async function useRecoveryCode(db: Queryable, memberId: string, codeHash: string, at: Date): Promise<boolean> {
  const rows = await db.query(
    `UPDATE member_recovery_codes SET used_at = $3 WHERE member_id = $1 AND code_hash = $2 AND used_at IS NULL RETURNING 1`,
    [memberId, codeHash, at],
  );
  return rows.length > 0;
}

/**
 * Records `step` as the member's last accepted TOTP time step; false when it is not later than the
 * last one (a code replayed, or an older one): of two uses of one code at once, one wins.
 */
export async function claimTotpStep(db: Queryable, memberId: string, step: number): Promise<boolean> {
  const rows = await db.query(
    `UPDATE members SET totp_last_step = $2 WHERE id = $1 AND (totp_last_step IS NULL OR totp_last_step < $2) RETURNING 1`,
    [memberId, step],
  );
  return rows.length > 0;
}

/** A member's TOTP secrets, enrolled and pending, as stored (sealed). */
export interface StoredTotpSecrets {
  totpSecret: string | null;
  totpPending: string | null;
}

/** Every stored TOTP secret, enrolled or pending, for re-encryption. */
export async function storedTotpSecrets(db: Queryable): Promise<Array<{ id: string } & StoredTotpSecrets>> {
  const rows = await db.query<{ id: string; totp_secret: string | null; totp_pending: string | null }>(
    `SELECT id, totp_secret, totp_pending FROM members WHERE totp_secret IS NOT NULL OR totp_pending IS NOT NULL`,
  );
  return rows.map((row) => ({ id: row.id, totpSecret: row.totp_secret, totpPending: row.totp_pending }));
}

/** Replaces a member's TOTP secrets only if they are still the ones read (a concurrent change wins). */
export async function resealTotpSecrets(
  db: Queryable,
  id: string,
  before: StoredTotpSecrets,
  after: StoredTotpSecrets,
): Promise<void> {
  await db.query(
    `UPDATE members SET totp_secret = $4, totp_pending = $5
     WHERE id = $1 AND totp_secret IS NOT DISTINCT FROM $2 AND totp_pending IS NOT DISTINCT FROM $3`,
    [id, before.totpSecret, before.totpPending, after.totpSecret, after.totpPending],
  );
}
