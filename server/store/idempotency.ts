import type { Queryable } from "./database.ts";
import { named, readRow, selectList } from "./statements.ts";
import { int, type RecordOf, table, text } from "../domain/table.ts";

/** One (API key, Idempotency-Key) pair. */
export interface IdempotencyKeyRef {
  apiKeyId: string;
  key: string;
}

/** A claim of a pair by one attempt: the token proves the attempt still holds it. */
export interface IdempotencyLock extends IdempotencyKeyRef {
  token: string;
}

/** What a claim returns of the pair's record (idempotency_keys, migration 006). */
const CLAIMED = table("idempotency_keys", {
  operation: text(),
  fingerprint: text(),
  lockToken: text(),
  resourceId: text().nullable(),
  responseStatus: int().nullable(),
  responseBody: text().nullable(),
});

/** The record as it stands after a claim. */
export type IdempotencyRecord = RecordOf<typeof CLAIMED>;

export interface ClaimInput extends IdempotencyLock {
  operation: string;
  fingerprint: string;
  now: Date;
  lockedUntil: Date;
  expiresAt: Date;
}

/**
 * The pair's claim, in one statement that always returns the row: a new pair is inserted with
 * this attempt's lock; an expired record is replaced as if new; a record still in flight whose
 * lock has lapsed (its process died or stalled) is taken over by the same request, keeping the
 * resource it may have created; anything else is returned unchanged. The caller owns the pair
 * when the returned lock token is its own. (On PostgreSQL a concurrent claim of the same pair
 * waits for this one and then sees its row.)
 */
const CLAIM =
  named<ClaimInput>(`INSERT INTO idempotency_keys AS k (api_key_id, idempotency_key, operation, fingerprint, lock_token, locked_until, created_at, expires_at)
VALUES ($apiKeyId, $key, $operation, $fingerprint, $token, $lockedUntil, $now, $expiresAt)
ON CONFLICT (api_key_id, idempotency_key) DO UPDATE SET
  operation = CASE WHEN k.expires_at <= $now THEN excluded.operation ELSE k.operation END,
  fingerprint = CASE WHEN k.expires_at <= $now THEN excluded.fingerprint ELSE k.fingerprint END,
  resource_id = CASE WHEN k.expires_at <= $now THEN NULL ELSE k.resource_id END,
  response_status = CASE WHEN k.expires_at <= $now THEN NULL ELSE k.response_status END,
  response_body = CASE WHEN k.expires_at <= $now THEN NULL ELSE k.response_body END,
  created_at = CASE WHEN k.expires_at <= $now THEN excluded.created_at ELSE k.created_at END,
  expires_at = CASE WHEN k.expires_at <= $now THEN excluded.expires_at ELSE k.expires_at END,
  lock_token = CASE WHEN k.expires_at <= $now OR (k.response_status IS NULL AND k.locked_until <= $now AND k.operation = excluded.operation AND k.fingerprint = excluded.fingerprint)
    THEN excluded.lock_token ELSE k.lock_token END,
  locked_until = CASE WHEN k.expires_at <= $now OR (k.response_status IS NULL AND k.locked_until <= $now AND k.operation = excluded.operation AND k.fingerprint = excluded.fingerprint)
    THEN excluded.locked_until ELSE k.locked_until END
RETURNING ${selectList(CLAIMED, { alias: "k" })}`);

export async function claimIdempotencyKey(db: Queryable, input: ClaimInput): Promise<IdempotencyRecord> {
  const [row] = await db.query(CLAIM.text, CLAIM.params(input));
  return readRow(CLAIMED, row!);
}

/**
 * Notes the created resource, inside the transaction that creates it. False when the lock is no
 * longer this attempt's (it lapsed and another attempt took the pair over): the caller must then
 * roll back rather than create a second resource.
 */
export async function recordIdempotentResource(
  tx: Queryable,
  lock: IdempotencyLock,
  resourceId: string,
): Promise<boolean> {
  const rows = await tx.query(
    "UPDATE idempotency_keys SET resource_id = $4 WHERE api_key_id = $1 AND idempotency_key = $2 AND lock_token = $3 RETURNING 1",
    [lock.apiKeyId, lock.key, lock.token, resourceId],
  );
  return rows.length === 1;
}

/** Stores the answer to replay and ends the lock. Nothing happens if the lock is no longer this attempt's. */
export async function saveIdempotentResponse(
  db: Queryable,
  lock: IdempotencyLock,
  status: number,
  body: string,
): Promise<void> {
  await db.query(
    "UPDATE idempotency_keys SET response_status = $4, response_body = $5, locked_until = NULL WHERE api_key_id = $1 AND idempotency_key = $2 AND lock_token = $3",
    [lock.apiKeyId, lock.key, lock.token, status, body],
  );
}

/**
 * After a failure with no answer worth storing (500): a record that created nothing is deleted,
 * so a retry runs afresh; one whose resource exists is unlocked at once, so a retry answers from
 * that resource. One statement, reading the row as committed: after a failed commit that did
 * apply, the resource is there and the record is kept.
 */
export async function releaseIdempotencyKey(db: Queryable, lock: IdempotencyLock, now: Date): Promise<void> {
  await db.query(
    `WITH released AS (
       DELETE FROM idempotency_keys WHERE api_key_id = $1 AND idempotency_key = $2 AND lock_token = $3 AND resource_id IS NULL RETURNING 1
     )
     UPDATE idempotency_keys SET locked_until = $4
     WHERE api_key_id = $1 AND idempotency_key = $2 AND lock_token = $3 AND resource_id IS NOT NULL`,
    [lock.apiKeyId, lock.key, lock.token, now],
  );
}

/**
 * Deletes records past their 24 hours. The check comes first and is a read, so a sweep with
 * nothing to delete writes nothing.
 */
export async function deleteExpiredIdempotencyKeys(db: Queryable, now: Date): Promise<number> {
  const due = await db.query("SELECT 1 FROM idempotency_keys WHERE expires_at <= $1 LIMIT 1", [now]);
  if (due.length === 0) return 0;
  const deleted = await db.query("DELETE FROM idempotency_keys WHERE expires_at <= $1 RETURNING 1", [now]);
  return deleted.length;
}
