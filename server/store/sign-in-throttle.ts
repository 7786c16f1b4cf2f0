import { dateOf } from "./columns.ts";
import type { Queryable } from "./database.ts";

/** How a subject's attempts are spaced: `free` attempts without a wait, then `baseMs` doubling up to `maxMs`. */
export interface Backoff {
  free: number;
  baseMs: number;
  maxMs: number;
  /** A subject with no attempt for this long starts afresh. */
  forgetAfterMs: number;
}

export interface Reservation {
  /** Whether the attempt may go ahead (it is then counted as a failure until it succeeds). */
  reserved: boolean;
  /** Attempts counted since the last success, this one included when reserved. */
  failures: number;
  /** Attempts refused in a row (1 on the first refusal). */
  refused: number;
  nextAttemptAt: Date;
}

/**
 * Reserves an attempt for `subject` in one statement: counted, and the next one pushed back by the
 * backoff, only when the subject's wait has passed. The row is locked by the statement, so of many
 * attempts at once, from any process, exactly those the backoff allows are reserved.
 */
export async function reserveAttempt(
  db: Queryable,
  subject: string,
  now: Date,
  backoff: Backoff,
): Promise<Reservation> {
  const [row] = await db.query<{ failures: number; refused: number; next_attempt_at: Date | string }>(
    `WITH b AS (SELECT $3::int AS free, $4::float8 AS base_ms, $5::float8 AS max_ms)
     INSERT INTO sign_in_throttle AS t (subject, failures, refused, next_attempt_at, last_attempt_at)
     SELECT $1, 1, 0, $2::timestamptz + (CASE WHEN 1 < b.free THEN 0 ELSE least(b.base_ms, b.max_ms) END) * interval '1 millisecond', $2
     FROM b
     ON CONFLICT (subject) DO UPDATE SET
       failures = CASE WHEN t.next_attempt_at > $2 THEN t.failures
                       WHEN t.last_attempt_at < $6 THEN 1 ELSE t.failures + 1 END,
       refused = CASE WHEN t.next_attempt_at > $2 THEN t.refused + 1 ELSE 0 END,
       next_attempt_at = CASE WHEN t.next_attempt_at > $2 THEN t.next_attempt_at
                              ELSE $2::timestamptz + (SELECT CASE WHEN n < b.free THEN 0
                                     ELSE least(b.base_ms * power(2, n - b.free), b.max_ms) END
                                   FROM b, (SELECT CASE WHEN t.last_attempt_at < $6 THEN 1 ELSE t.failures + 1 END AS n) c)
                                   * interval '1 millisecond' END,
       last_attempt_at = CASE WHEN t.next_attempt_at > $2 THEN t.last_attempt_at ELSE $2 END
     RETURNING failures, refused, next_attempt_at`,
    [subject, now, backoff.free, backoff.baseMs, backoff.maxMs, new Date(now.getTime() - backoff.forgetAfterMs)],
  );
  const refused = Number(row!.refused);
  return {
    reserved: refused === 0,
    failures: Number(row!.failures),
    refused,
    nextAttemptAt: dateOf(row!.next_attempt_at),
  };
}

/** Gives back a reserved attempt that turned out not to be a failure (a sign-in that still needs its second factor). */
export async function releaseAttempt(db: Queryable, subject: string): Promise<void> {
  await db.query(`UPDATE sign_in_throttle SET failures = greatest(failures - 1, 0) WHERE subject = $1`, [subject]);
}

/** Forgets the subjects' attempts: after a success, or when an owner or the operator clears a throttle. */
export async function clearAttempts(db: Queryable, subjects: readonly string[]): Promise<number> {
  const rows = await db.query(`DELETE FROM sign_in_throttle WHERE subject = ANY($1::text[]) RETURNING 1`, [subjects]);
  return rows.length;
}

/** Forgets every pair of the account (all addresses) and its ceiling. */
export async function clearAccountAttempts(db: Queryable, accountSubject: string, pairPrefix: string): Promise<number> {
  const rows = await db.query(
    `DELETE FROM sign_in_throttle WHERE subject = $1 OR starts_with(subject, $2) RETURNING 1`,
    [accountSubject, pairPrefix],
  );
  return rows.length;
}

/**
 * Deletes up to `batch` subjects whose last attempt is older than `before` and whose wait is over:
 * reserveAttempt would start them afresh anyway. Without it, sign-ins to made-up emails would
 * leave a row each for good.
 */
export async function forgetStaleAttempts(db: Queryable, before: Date, now: Date, batch = 1000): Promise<number> {
  const rows = await db.query(
    `DELETE FROM sign_in_throttle WHERE subject IN (
       SELECT subject FROM sign_in_throttle WHERE last_attempt_at < $1 AND next_attempt_at <= $2 LIMIT $3
     ) RETURNING 1`,
    [before, now, batch],
  );
  return rows.length;
}

// ---------------------------------------------------------------- known devices

/**
 * Whether the browser whose device token hashes to `tokenHash` signed in as the member (and was
 * last used since `since`): a browser known for the account.
 */
export async function deviceKnown(db: Queryable, memberId: string, tokenHash: string, since: Date): Promise<boolean> {
  const rows = await db.query(
    `SELECT 1 FROM member_devices WHERE member_id = $1 AND token_hash = $2 AND last_used_at >= $3 LIMIT 1`,
    [memberId, tokenHash, since],
  );
  return rows.length > 0;
}

/**
 * Records a sign-in of the member from the browser whose device token hashes to `tokenHash`, and
 * keeps only the member's `keep` most recently used browsers.
 */
export async function recordDevice(
  db: Queryable,
  memberId: string,
  tokenHash: string,
  now: Date,
  keep: number,
): Promise<void> {
  await db.query(
    `INSERT INTO member_devices AS d (member_id, token_hash, created_at, last_used_at) VALUES ($1, $2, $3, $3)
     ON CONFLICT (member_id, token_hash) DO UPDATE SET last_used_at = greatest(d.last_used_at, EXCLUDED.last_used_at)`,
    [memberId, tokenHash, now],
  );
  await db.query(
    `DELETE FROM member_devices WHERE member_id = $1 AND token_hash NOT IN (
       SELECT token_hash FROM member_devices WHERE member_id = $1
       ORDER BY last_used_at DESC, created_at DESC, token_hash LIMIT $2
     )`,
    [memberId, keep],
  );
}

/** Deletes up to `batch` devices last used before `before`: their cookie has expired. */
export async function forgetStaleDevices(db: Queryable, before: Date, batch = 1000): Promise<number> {
  const rows = await db.query(
    `DELETE FROM member_devices WHERE (member_id, token_hash) IN (
       SELECT member_id, token_hash FROM member_devices WHERE last_used_at < $1 LIMIT $2
     ) RETURNING 1`,
    [before, batch],
  );
  return rows.length;
}
