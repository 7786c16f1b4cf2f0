import type { AuditAction, Mode, Role } from "../domain/types.ts";
import { dateOf, dateOrNull } from "./columns.ts";
import type { Queryable } from "./database.ts";

export type { Role };

export interface Member {
  id: string;
  brandId: string;
  email: string;
  role: Role;
  passwordHash: string;
  totpSecret: string | null;
  totpPending: string | null;
  createdAt: Date;
  lastSignInAt: Date | null;
}

interface MemberRow {
  id: string;
  brand_id: string;
  email: string;
  role: Role;
  password_hash: string;
  totp_secret: string | null;
  totp_pending: string | null;
  created_at: Date | string;
  last_sign_in_at: Date | string | null;
}

function memberOf(row: MemberRow): Member {
  return {
    id: row.id,
    brandId: row.brand_id,
    email: row.email,
    role: row.role,
    passwordHash: row.password_hash,
    totpSecret: row.totp_secret,
    totpPending: row.totp_pending,
    createdAt: dateOf(row.created_at),
    lastSignInAt: dateOrNull(row.last_sign_in_at),
  };
}

/**
 * The new member, or null when a member of the brand not removed already has the email: another
 * transaction made it after this one looked (two invitations for one email accepted at once).
 */
export async function insertMember(
  db: Queryable,
  member: Omit<Member, "totpSecret" | "totpPending" | "lastSignInAt">,
): Promise<Member | null> {
  const [row] = await db.query<MemberRow>(
    `INSERT INTO members (id, brand_id, email, role, password_hash, created_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (brand_id, email) WHERE removed_at IS NULL DO NOTHING RETURNING *`,
    [member.id, member.brandId, member.email, member.role, member.passwordHash, member.createdAt],
  );
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
  const rows = await db.query<MemberRow>(
    `SELECT * FROM members WHERE email = $1 AND removed_at IS NULL AND ($3::uuid IS NULL OR brand_id = $3)
     ORDER BY last_sign_in_at DESC NULLS LAST, created_at DESC LIMIT $2`,
    [email, MEMBERSHIPS_PER_EMAIL, brandId ?? null],
  );
  return rows.map(memberOf);
}

/** The brand's member not removed with this email. */
export async function findMemberByEmail(db: Queryable, brandId: string, email: string): Promise<Member | null> {
  const [row] = await db.query<MemberRow>(
    `SELECT * FROM members WHERE brand_id = $1 AND email = $2 AND removed_at IS NULL`,
    [brandId, email],
  );
  return row ? memberOf(row) : null;
}

/** A member not removed, by id alone (a password-reset link names no brand). */
export async function findMemberById(db: Queryable, id: string, { forUpdate = false } = {}): Promise<Member | null> {
  const [row] = await db.query<MemberRow>(
    `SELECT * FROM members WHERE id = $1 AND removed_at IS NULL${forUpdate ? " FOR UPDATE" : ""}`,
    [id],
  );
  return row ? memberOf(row) : null;
}

export async function findMember(
  db: Queryable,
  brandId: string,
  id: string,
  { forUpdate = false } = {},
): Promise<Member | null> {
  const [row] = await db.query<MemberRow>(
    `SELECT * FROM members WHERE id = $1 AND brand_id = $2 AND removed_at IS NULL${forUpdate ? " FOR UPDATE" : ""}`,
    [id, brandId],
  );
  return row ? memberOf(row) : null;
}

/** The brand's members (not removed), oldest first, at most `limit`. */
export async function listMembers(db: Queryable, brandId: string, limit: number): Promise<Member[]> {
  const rows = await db.query<MemberRow>(
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

export async function updateMember(
  db: Queryable,
  id: string,
  patch: Partial<Pick<Member, "role" | "passwordHash" | "totpSecret" | "totpPending" | "lastSignInAt">> & {
    removedAt?: Date;
    totpLastStep?: number | null;
  },
): Promise<void> {
  const columns: Record<string, unknown> = {
    totp_last_step: patch.totpLastStep,
    role: patch.role,
    password_hash: patch.passwordHash,
    totp_secret: patch.totpSecret,
    totp_pending: patch.totpPending,
    last_sign_in_at: patch.lastSignInAt,
    removed_at: patch.removedAt,
  };
  const set = Object.entries(columns).filter(([, value]) => value !== undefined);
  if (set.length === 0) return;
  await db.query(`UPDATE members SET ${set.map(([name], i) => `${name} = $${i + 2}`).join(", ")} WHERE id = $1`, [
    id,
    ...set.map(([, value]) => value),
  ]);
}

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

/** Every stored TOTP secret, enrolled or pending, for re-encryption. */
export async function storedTotpSecrets(
  db: Queryable,
): Promise<Array<{ id: string; totpSecret: string | null; totpPending: string | null }>> {
  const rows = await db.query<{ id: string; totp_secret: string | null; totp_pending: string | null }>(
    `SELECT id, totp_secret, totp_pending FROM members WHERE totp_secret IS NOT NULL OR totp_pending IS NOT NULL`,
  );
  return rows.map((row) => ({ id: row.id, totpSecret: row.totp_secret, totpPending: row.totp_pending }));
}

/** Replaces a member's TOTP secrets only if they are still the ones read (a concurrent change wins). */
export async function resealTotpSecrets(
  db: Queryable,
  id: string,
  before: { totpSecret: string | null; totpPending: string | null },
  after: { totpSecret: string | null; totpPending: string | null },
): Promise<void> {
  await db.query(
    `UPDATE members SET totp_secret = $4, totp_pending = $5
     WHERE id = $1 AND totp_secret IS NOT DISTINCT FROM $2 AND totp_pending IS NOT DISTINCT FROM $3`,
    [id, before.totpSecret, before.totpPending, after.totpSecret, after.totpPending],
  );
}

// ---------------------------------------------------------------- invitations

export interface Invitation {
  id: string;
  brandId: string;
  email: string;
  role: Role;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
  revokedAt: Date | null;
}

interface InvitationRow {
  id: string;
  brand_id: string;
  email: string;
  role: Role;
  created_at: Date | string;
  expires_at: Date | string;
  used_at: Date | string | null;
  revoked_at: Date | string | null;
}

function invitationOf(row: InvitationRow): Invitation {
  return {
    id: row.id,
    brandId: row.brand_id,
    email: row.email,
    role: row.role,
    createdAt: dateOf(row.created_at),
    expiresAt: dateOf(row.expires_at),
    usedAt: dateOrNull(row.used_at),
    revokedAt: dateOrNull(row.revoked_at),
  };
}

export async function insertInvitation(
  db: Queryable,
  invitation: Omit<Invitation, "usedAt" | "revokedAt">,
  tokenHash: string,
  invitedBy: string | null,
): Promise<Invitation> {
  const [row] = await db.query<InvitationRow>(
    `INSERT INTO invitations (id, brand_id, email, role, token_hash, invited_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [
      invitation.id,
      invitation.brandId,
      invitation.email,
      invitation.role,
      tokenHash,
      invitedBy,
      invitation.createdAt,
      invitation.expiresAt,
    ],
  );
  return invitationOf(row!);
}

/**
 * An invitation lives only while its creator is an owner (the operator's have no creator): they
 * are revoked when the creator is removed or re-roled, and this holds for older rows too.
 */
const CREATOR_STILL_OWNER = `SELECT 1 FROM members c WHERE c.id = i.invited_by AND c.removed_at IS NULL AND c.role = 'owner'`;

/** The invitation with the token's hash that can still be used at `now`, locked when asked. */
export async function findOpenInvitation(
  db: Queryable,
  tokenHash: string,
  now: Date,
  { forUpdate = false } = {},
): Promise<Invitation | null> {
  const [row] = await db.query<InvitationRow>(
    `SELECT * FROM invitations i WHERE token_hash = $1 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > $2
     AND (invited_by IS NULL OR EXISTS (${CREATOR_STILL_OWNER}))${forUpdate ? " FOR UPDATE OF i" : ""}`,
    [tokenHash, now],
  );
  return row ? invitationOf(row) : null;
}

/** The brand's invitations open at `now`, oldest first, at most `limit`. */
export async function listOpenInvitations(
  db: Queryable,
  brandId: string,
  now: Date,
  limit: number,
): Promise<Invitation[]> {
  const rows = await db.query<InvitationRow>(
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

// ---------------------------------------------------------------- sessions

export interface SessionRecord {
  /** The session's name in the API (`session_id`): never its cookie or the cookie's hash. */
  publicId: string;
  memberId: string;
  csrfToken: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
  /** The browser's User-Agent at sign-in; null when it sent none or the session predates it. */
  userAgent: string | null;
  /** The client address it was last seen from; null for sessions begun before addresses were kept. */
  address: string | null;
}

export async function insertSession(db: Queryable, idHash: string, session: SessionRecord): Promise<void> {
  await db.query(
    `INSERT INTO dashboard_sessions (id_hash, public_id, member_id, csrf_token, created_at, last_seen_at, expires_at, user_agent, address)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      idHash,
      session.publicId,
      session.memberId,
      session.csrfToken,
      session.createdAt,
      session.lastSeenAt,
      session.expiresAt,
      session.userAgent,
      session.address,
    ],
  );
}

interface SessionRow {
  public_id: string;
  member_id: string;
  csrf_token: string;
  created_at: Date | string;
  last_seen_at: Date | string;
  expires_at: Date | string;
  user_agent: string | null;
  address: string | null;
}

const SESSION_COLUMNS = "public_id, member_id, csrf_token, created_at, last_seen_at, expires_at, user_agent, address";
/** The same columns of `dashboard_sessions s` beside a member's, each as `s_<column>`. */
const SESSION_COLUMNS_OF_S = SESSION_COLUMNS.split(", ")
  .map((column) => `s.${column} AS s_${column}`)
  .join(", ");

function sessionOf(row: SessionRow): SessionRecord {
  return {
    publicId: row.public_id,
    memberId: row.member_id,
    csrfToken: row.csrf_token,
    createdAt: dateOf(row.created_at),
    lastSeenAt: dateOf(row.last_seen_at),
    expiresAt: dateOf(row.expires_at),
    userAgent: row.user_agent,
    address: row.address,
  };
}

/**
 * A member's sessions live at `now` (neither revoked nor past their absolute end, and used within
 * `idleMs`), the most recently seen first, at most `limit`; and how many there are.
 */
export async function liveSessions(
  db: Queryable,
  memberId: string,
  { now, idleMs, limit }: { now: Date; idleMs: number; limit: number },
): Promise<{ sessions: SessionRecord[]; total: number }> {
  const live = `member_id = $1 AND revoked_at IS NULL AND expires_at > $2 AND last_seen_at > $3`;
  const params = [memberId, now, new Date(now.getTime() - idleMs)];
  const [rows, [count]] = await Promise.all([
    db.query<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM dashboard_sessions WHERE ${live} ORDER BY last_seen_at DESC, created_at DESC, public_id LIMIT $4`,
      [...params, limit],
    ),
    db.query<{ count: string | number }>(`SELECT count(*) AS count FROM dashboard_sessions WHERE ${live}`, params),
  ]);
  return { sessions: rows.map(sessionOf), total: Number(count?.count ?? 0) };
}

/**
 * Revokes the member's session named `publicId` if it is live at `now` (as `liveSessions` counts
 * it); returns it as it was, or null when there is no such session.
 */
export async function revokeSessionByPublicId(
  db: Queryable,
  memberId: string,
  publicId: string,
  { now, idleMs }: { now: Date; idleMs: number },
): Promise<SessionRecord | null> {
  const [row] = await db.query<SessionRow>(
    `UPDATE dashboard_sessions SET revoked_at = $3
     WHERE public_id = $2 AND member_id = $1 AND revoked_at IS NULL AND expires_at > $3 AND last_seen_at > $4
     RETURNING ${SESSION_COLUMNS}`,
    [memberId, publicId, now, new Date(now.getTime() - idleMs)],
  );
  return row ? sessionOf(row) : null;
}

/** The live session with the id's hash and its member (not removed), or null. */
export async function findSession(
  db: Queryable,
  idHash: string,
  now: Date,
): Promise<{ session: SessionRecord; member: Member } | null> {
  const [row] = await db.query<MemberRow & { [K in keyof SessionRow as `s_${K}`]: SessionRow[K] }>(
    `SELECT m.*, ${SESSION_COLUMNS_OF_S}
     FROM dashboard_sessions s JOIN members m ON m.id = s.member_id
     WHERE s.id_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2 AND m.removed_at IS NULL`,
    [idHash, now],
  );
  if (!row) return null;
  return {
    member: memberOf(row),
    session: sessionOf({
      public_id: row.s_public_id,
      member_id: row.s_member_id,
      csrf_token: row.s_csrf_token,
      created_at: row.s_created_at,
      last_seen_at: row.s_last_seen_at,
      expires_at: row.s_expires_at,
      user_agent: row.s_user_agent,
      address: row.s_address,
    }),
  };
}

/** Records a use of the session: when, and from which client address. */
export async function touchSession(db: Queryable, idHash: string, lastSeenAt: Date, address: string): Promise<void> {
  await db.query(`UPDATE dashboard_sessions SET last_seen_at = $2, address = $3 WHERE id_hash = $1`, [
    idHash,
    lastSeenAt,
    address,
  ]);
}

/**
 * Counts a request in the session's window starting at `windowStart` (its row's `window_start`
 * and `window_count`: shared by every process on PostgreSQL) and returns the count, this request
 * included; a new window starts at 1. 0 when no such session row exists.
 */
export async function countSessionRequest(db: Queryable, idHash: string, windowStart: Date): Promise<number> {
  const [row] = await db.query<{ window_count: number }>(
    `UPDATE dashboard_sessions
     SET window_count = CASE WHEN window_start = $2 THEN window_count + 1 ELSE 1 END, window_start = $2
     WHERE id_hash = $1 RETURNING window_count`,
    [idHash, windowStart],
  );
  return row?.window_count ?? 0;
}

/** Ends sessions of the member (all, or all but one); returns how many. */
export async function revokeSessions(
  db: Queryable,
  memberId: string,
  at: Date,
  { except }: { except?: string } = {},
): Promise<number> {
  const rows = await db.query(
    `UPDATE dashboard_sessions SET revoked_at = $2 WHERE member_id = $1 AND revoked_at IS NULL AND expires_at > $2${except ? " AND id_hash <> $3" : ""} RETURNING 1`,
    except ? [memberId, at, except] : [memberId, at],
  );
  return rows.length;
}

export async function revokeSession(db: Queryable, idHash: string, at: Date): Promise<void> {
  await db.query(`UPDATE dashboard_sessions SET revoked_at = $2 WHERE id_hash = $1 AND revoked_at IS NULL`, [
    idHash,
    at,
  ]);
}

// ---------------------------------------------------------------- audit log

export interface AuditEntry {
  id: string;
  brandId: string;
  at: Date;
  actor: string;
  memberId: string | null;
  /** The client address of the request that made the change; null in entries written before it was kept. */
  address: string | null;
  action: AuditAction;
  mode: Mode | null;
  targetId: string | null;
  /** What the target was called then (a key's name, an email, a product, a device). */
  targetName: string | null;
  detail: string;
}

export async function insertAuditEntry(db: Queryable, entry: AuditEntry): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (id, brand_id, at, actor, member_id, address, action, mode, target_id, target_name, detail)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      entry.id,
      entry.brandId,
      entry.at,
      entry.actor,
      entry.memberId,
      entry.address,
      entry.action,
      entry.mode,
      entry.targetId,
      entry.targetName,
      entry.detail,
    ],
  );
}

/** The owners' filters of the audit log: one action, what one member did, or both. */
export interface AuditFilter {
  action?: AuditAction | undefined;
  memberId?: string | undefined;
}

function auditWhere(brandId: string, filter: AuditFilter): { where: string; params: unknown[] } {
  const params: unknown[] = [brandId];
  let where = "brand_id = $1";
  if (filter.action) where += ` AND action = $${params.push(filter.action)}`;
  if (filter.memberId) where += ` AND member_id = $${params.push(filter.memberId)}`;
  return { where, params };
}

/** One page of the brand's entries matching `filter`, newest first. */
export async function listAuditEntries(
  db: Queryable,
  brandId: string,
  filter: AuditFilter,
  { limit, offset }: { limit: number; offset: number },
): Promise<AuditEntry[]> {
  const { where, params } = auditWhere(brandId, filter);
  const rows = await db.query<{
    id: string;
    brand_id: string;
    at: Date | string;
    actor: string;
    member_id: string | null;
    address: string | null;
    action: AuditAction;
    mode: Mode | null;
    target_id: string | null;
    target_name: string | null;
    detail: string;
  }>(
    `SELECT * FROM audit_log WHERE ${where} ORDER BY at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, limit, offset],
  );
  return rows.map((row) => ({
    id: row.id,
    brandId: row.brand_id,
    at: dateOf(row.at),
    actor: row.actor,
    memberId: row.member_id,
    address: row.address,
    action: row.action,
    mode: row.mode,
    targetId: row.target_id,
    targetName: row.target_name,
    detail: row.detail,
  }));
}

/** How many of the brand's entries match `filter` (the list's `total`). */
export async function countAuditEntries(db: Queryable, brandId: string, filter: AuditFilter): Promise<number> {
  const { where, params } = auditWhere(brandId, filter);
  const [row] = await db.query<{ count: string | number }>(
    `SELECT count(*) AS count FROM audit_log WHERE ${where}`,
    params,
  );
  return Number(row?.count ?? 0);
}
