/** Invitations to join a brand: open until used, revoked or expired, and only while their creator is an owner. */
import { INVITATIONS, type Invitation } from "../domain/types.ts";
import type { Queryable } from "./database.ts";
import { insertRow, readRow } from "./statements.ts";

const invitationOf = (row: object): Invitation => readRow(INVITATIONS, row);

export async function insertInvitation(
  db: Queryable,
  invitation: Omit<Invitation, "usedAt" | "revokedAt">,
  tokenHash: string,
  invitedBy: string | null,
): Promise<Invitation> {
  const { text, params } = insertRow(INVITATIONS, { ...invitation, tokenHash, invitedBy }, "RETURNING *");
  const [row] = await db.query(text, params);
  return invitationOf(row!);
}

/**
 * An invitation lives only while its creator is an owner (the operator's have no creator): they
 * are revoked when the creator is removed or re-roled, and this holds for older rows too.
 */
const CREATOR_STILL_OWNER = `SELECT 1 FROM members c WHERE c.id = i.invited_by AND c.removed_at IS NULL AND c.role = 'owner'`;

const OPEN_WITH_TOKEN = `SELECT * FROM invitations i WHERE token_hash = $1 AND used_at IS NULL AND revoked_at IS NULL
  AND expires_at > $2 AND (invited_by IS NULL OR EXISTS (${CREATOR_STILL_OWNER}))`;

/** The invitation with the token's hash that can still be used at `now`. */
export async function findOpenInvitation(db: Queryable, tokenHash: string, now: Date): Promise<Invitation | null> {
  const [row] = await db.query(OPEN_WITH_TOKEN, [tokenHash, now]);
  return row ? invitationOf(row) : null;
}

/** findOpenInvitation, the row locked until the transaction ends. */
export async function lockOpenInvitation(db: Queryable, tokenHash: string, now: Date): Promise<Invitation | null> {
  const [row] = await db.query(`${OPEN_WITH_TOKEN} FOR UPDATE OF i`, [tokenHash, now]);
  return row ? invitationOf(row) : null;
}

/** The brand's invitations open at `now`, oldest first, at most `limit`. */
export async function listOpenInvitations(
  db: Queryable,
  brandId: string,
  now: Date,
  limit: number,
): Promise<Invitation[]> {
  const rows = await db.query(
    `SELECT * FROM invitations i WHERE brand_id = $1 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > $2
     AND (invited_by IS NULL OR EXISTS (${CREATOR_STILL_OWNER})) ORDER BY created_at, id LIMIT $3`,
    [brandId, now, limit],
  );
  return rows.map(invitationOf);
}

/** The brand's invitations open at `now` (neither used, revoked nor expired): what the invitation cap counts. */
export async function openInvitationCount(db: Queryable, brandId: string, now: Date): Promise<number> {
  const [row] = await db.query<{ count: string | number }>(
    `SELECT count(*) AS count FROM invitations WHERE brand_id = $1 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > $2`,
    [brandId, now],
  );
  return Number(row?.count ?? 0);
}

/** Revokes the open invitations `memberId` made (they lose their owner's authority); returns how many. */
export async function revokeInvitationsBy(db: Queryable, memberId: string, at: Date): Promise<number> {
  const rows = await db.query(
    `UPDATE invitations SET revoked_at = $2 WHERE invited_by = $1 AND used_at IS NULL AND revoked_at IS NULL RETURNING 1`,
    [memberId, at],
  );
  return rows.length;
}

export async function markInvitation(
  db: Queryable,
  id: string,
  column: "used_at" | "revoked_at",
  at: Date,
  brandId?: string,
): Promise<{ email: string } | null> {
  const [row] = await db.query<{ email: string }>(
    `UPDATE invitations SET ${column} = $2 WHERE id = $1 AND used_at IS NULL AND revoked_at IS NULL${brandId ? " AND brand_id = $3" : ""} RETURNING email`,
    brandId ? [id, at, brandId] : [id, at],
  );
  return row ?? null;
}
