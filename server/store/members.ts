/** The members table: who belongs to which brand, with which role and password; removal is a mark. */
import type { InsertOf } from "../domain/table.ts";
import { MEMBERS, type Member } from "../domain/types.ts";
import type { Queryable } from "./database.ts";
import { insertRow, readRow, updateRows } from "./statements.ts";

export const memberOf = (row: object): Member => readRow(MEMBERS, row);

/**
 * The new member, or null when a member of the brand not removed already has the email: another
 * transaction made it after this one looked (two invitations for one email accepted at once).
 */
export async function insertMember(db: Queryable, member: InsertOf<typeof MEMBERS>): Promise<Member | null> {
  const { text, params } = insertRow(
    MEMBERS,
    member,
    "ON CONFLICT (brand_id, email) WHERE removed_at IS NULL DO NOTHING RETURNING *",
  );
  const [row] = await db.query(text, params);
  return row ? memberOf(row) : null;
}

/** The most members one email may have across brands that sign-in looks at (each costs a password check). */
export const MEMBERSHIPS_PER_EMAIL = 20;

/**
 * The members not removed with this email (of `brandId` alone when given), one per brand at most,
 * the most recently signed-in first (sign-in checks the password against each). At most
 * MEMBERSHIPS_PER_EMAIL: naming the brand reaches any of them.
 */
export async function findMembersByEmail(db: Queryable, email: string, brandId?: string): Promise<Member[]> {
  const rows = await db.query(
    `SELECT * FROM members WHERE email = $1 AND removed_at IS NULL AND ($3::uuid IS NULL OR brand_id = $3)
     ORDER BY last_sign_in_at DESC NULLS LAST, created_at DESC LIMIT $2`,
    [email, MEMBERSHIPS_PER_EMAIL, brandId ?? null],
  );
  return rows.map(memberOf);
}

/** The brand's member not removed with this email. */
export async function findMemberByEmail(db: Queryable, brandId: string, email: string): Promise<Member | null> {
  const [row] = await db.query(`SELECT * FROM members WHERE brand_id = $1 AND email = $2 AND removed_at IS NULL`, [
    brandId,
    email,
  ]);
  return row ? memberOf(row) : null;
}

const BY_ID = "SELECT * FROM members WHERE id = $1 AND removed_at IS NULL";
const OF_BRAND = "SELECT * FROM members WHERE id = $1 AND brand_id = $2 AND removed_at IS NULL";

/** A member not removed, by id alone (a password-reset link names no brand). */
export async function findMemberById(db: Queryable, id: string): Promise<Member | null> {
  const [row] = await db.query(BY_ID, [id]);
  return row ? memberOf(row) : null;
}

/** findMemberById, the row locked until the transaction ends. */
export async function lockMemberById(db: Queryable, id: string): Promise<Member | null> {
  const [row] = await db.query(`${BY_ID} FOR UPDATE`, [id]);
  return row ? memberOf(row) : null;
}

export async function findMember(db: Queryable, brandId: string, id: string): Promise<Member | null> {
  const [row] = await db.query(OF_BRAND, [id, brandId]);
  return row ? memberOf(row) : null;
}

/** findMember, the row locked until the transaction ends. */
export async function lockMember(db: Queryable, brandId: string, id: string): Promise<Member | null> {
  const [row] = await db.query(`${OF_BRAND} FOR UPDATE`, [id, brandId]);
  return row ? memberOf(row) : null;
}

/** The brand's members (not removed), oldest first, at most `limit`. */
export async function listMembers(db: Queryable, brandId: string, limit: number): Promise<Member[]> {
  const rows = await db.query(
    `SELECT * FROM members WHERE brand_id = $1 AND removed_at IS NULL ORDER BY created_at, id LIMIT $2`,
    [brandId, limit],
  );
  return rows.map(memberOf);
}

/** The brand's members not removed: what the member cap counts. */
export async function memberCount(db: Queryable, brandId: string): Promise<number> {
  const [row] = await db.query<{ count: string | number }>(
    `SELECT count(*) AS count FROM members WHERE brand_id = $1 AND removed_at IS NULL`,
    [brandId],
  );
  return Number(row?.count ?? 0);
}

/** Owners of the brand, locked: a role change or removal that would leave none is refused. */
export async function lockOwners(db: Queryable, brandId: string): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM members WHERE brand_id = $1 AND role = 'owner' AND removed_at IS NULL ORDER BY id FOR UPDATE`,
    [brandId],
  );
  return rows.map((row) => row.id);
}

/** What a change of a member may write: its role, credentials, last sign-in, removal. */
export type MemberPatch = Partial<
  Pick<
    InsertOf<typeof MEMBERS>,
    "role" | "passwordHash" | "totpSecret" | "totpPending" | "totpLastStep" | "lastSignInAt" | "removedAt"
  >
>;

export async function updateMember(db: Queryable, id: string, patch: MemberPatch): Promise<void> {
  const update = updateRows(MEMBERS, { id }, patch);
  if (update) await db.query(update.text, update.params);
}
