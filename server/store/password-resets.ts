import { PASSWORD_RESETS, type PasswordReset } from "../domain/types.ts";
import type { Queryable } from "./database.ts";
import { insertRow, readRow } from "./statements.ts";

export async function insertPasswordReset(db: Queryable, reset: PasswordReset, tokenHash: string): Promise<void> {
  const { text, params } = insertRow(PASSWORD_RESETS, { ...reset, tokenHash });
  await db.query(text, params);
}

/**
 * The unused, unexpired link with the token's hash, of a member not removed, issued by the operator
 * or by an owner of the member's brand who still is one (a link dies with its issuer's right to
 * issue it).
 */
const OPEN_WITH_TOKEN = `SELECT r.* FROM password_resets r JOIN members m ON m.id = r.member_id
  LEFT JOIN members i ON i.id = r.issuer_member_id
  WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.expires_at > $2 AND m.removed_at IS NULL
    AND (r.issued_by = 'operator' AND r.issuer_member_id IS NULL
         OR i.removed_at IS NULL AND i.role = 'owner' AND i.brand_id = m.brand_id)`;

export async function findOpenPasswordReset(
  db: Queryable,
  tokenHash: string,
  now: Date,
): Promise<PasswordReset | null> {
  const [row] = await db.query(OPEN_WITH_TOKEN, [tokenHash, now]);
  return row ? readRow(PASSWORD_RESETS, row) : null;
}

/** findOpenPasswordReset, the link's row locked until the transaction ends. */
export async function lockOpenPasswordReset(
  db: Queryable,
  tokenHash: string,
  now: Date,
): Promise<PasswordReset | null> {
  const [row] = await db.query(`${OPEN_WITH_TOKEN} FOR UPDATE OF r`, [tokenHash, now]);
  return row ? readRow(PASSWORD_RESETS, row) : null;
}

/**
 * Uses up every open link the member issued: they changed their password, signed out everywhere
 * or reset it (a way in they may not have been the one to use), or they are no longer an owner.
 */
export async function usePasswordResetsIssuedBy(db: Queryable, issuerId: string, at: Date): Promise<void> {
  await db.query(`UPDATE password_resets SET used_at = $2 WHERE issuer_member_id = $1 AND used_at IS NULL`, [
    issuerId,
    at,
  ]);
}

/**
 * Uses up every open link of the member: the one followed and any older one, or all of them when
 * the member changes the password or signs out everywhere.
 */
export async function usePasswordResets(db: Queryable, memberId: string, at: Date): Promise<void> {
  await db.query(`UPDATE password_resets SET used_at = $2 WHERE member_id = $1 AND used_at IS NULL`, [memberId, at]);
}
