/** Dashboard sessions: each a member's sign-in, found by its cookie's hash, with its request window. */
import { DASHBOARD_SESSIONS, type Member, type SessionRecord } from "../domain/types.ts";
import type { Queryable } from "./database.ts";
import { memberOf } from "./members.ts";
import { insertRow, readRow, selectList } from "./statements.ts";

export async function insertSession(db: Queryable, idHash: string, session: SessionRecord): Promise<void> {
  const { text, params } = insertRow(DASHBOARD_SESSIONS, { ...session, idHash });
  await db.query(text, params);
}

const SESSION_COLUMNS = selectList(DASHBOARD_SESSIONS);
/** The same columns of `dashboard_sessions s` beside a member's, each as `s_<column>`. */
const SESSION_COLUMNS_OF_S = selectList(DASHBOARD_SESSIONS, { alias: "s", prefix: "s_" });

const sessionOf = (row: object, prefix = ""): SessionRecord => readRow(DASHBOARD_SESSIONS, row, prefix);

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
    db.query(
      `SELECT ${SESSION_COLUMNS} FROM dashboard_sessions WHERE ${live} ORDER BY last_seen_at DESC, created_at DESC, public_id LIMIT $4`,
      [...params, limit],
    ),
    db.query<{ count: string | number }>(`SELECT count(*) AS count FROM dashboard_sessions WHERE ${live}`, params),
  ]);
  return { sessions: rows.map((row) => sessionOf(row)), total: Number(count?.count ?? 0) };
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
  const [row] = await db.query(
    `UPDATE dashboard_sessions SET revoked_at = $3
     WHERE public_id = $2 AND member_id = $1 AND revoked_at IS NULL AND expires_at > $3 AND last_seen_at > $4
     RETURNING ${SESSION_COLUMNS}`,
    [memberId, publicId, now, new Date(now.getTime() - idleMs)],
  );
  return row ? sessionOf(row) : null;
}

/** A live session and its member. */
export interface SignedIn {
  session: SessionRecord;
  member: Member;
}

/** The live session with the id's hash and its member (not removed), or null. */
export async function findSession(db: Queryable, idHash: string, now: Date): Promise<SignedIn | null> {
  const [row] = await db.query(
    `SELECT m.*, ${SESSION_COLUMNS_OF_S}
     FROM dashboard_sessions s JOIN members m ON m.id = s.member_id
     WHERE s.id_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2 AND m.removed_at IS NULL`,
    [idHash, now],
  );
  return row ? { member: memberOf(row), session: sessionOf(row, "s_") } : null;
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
