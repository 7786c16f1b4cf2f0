import { API_KEYS, type ApiKeyRecord, type Brand, type Mode } from "../domain/types.ts";
import { brandFromRow } from "./brands.ts";
import type { Queryable } from "./database.ts";
import { insertRow, readRow } from "./statements.ts";

const keyFromRow = (row: object): ApiKeyRecord => readRow(API_KEYS, row);

/** A row of a key and its brand: the brand's columns, and the key's as one `to_jsonb` value (their names overlap). */
type KeyAndBrandRow = Record<string, unknown> & { key: object };

/** Null when a key of the brand and mode not revoked already has the name (migration 018's index). */
export async function insertKey(db: Queryable, key: ApiKeyRecord, keyHash: string): Promise<ApiKeyRecord | null> {
  const { text, params } = insertRow(
    API_KEYS,
    { ...key, keyHash },
    "ON CONFLICT (brand_id, environment, name) WHERE revoked_at IS NULL DO NOTHING RETURNING *",
  );
  const [row] = await db.query(text, params);
  return row ? keyFromRow(row) : null;
}

/** The brand's key of the mode with the name, not revoked, or null. */
export async function findActiveKeyNamed(
  db: Queryable,
  brandId: string,
  environment: Mode,
  name: string,
): Promise<ApiKeyRecord | null> {
  const [row] = await db.query(
    "SELECT * FROM api_keys WHERE brand_id = $1 AND environment = $2 AND name = $3 AND revoked_at IS NULL",
    [brandId, environment, name],
  );
  return row ? keyFromRow(row) : null;
}

/** The key with this hash (the full key pasted, hashed), or null. */
export async function findKeyByHash(db: Queryable, keyHash: string): Promise<ApiKeyRecord | null> {
  const [row] = await db.query("SELECT * FROM api_keys WHERE key_hash = $1", [keyHash]);
  return row ? keyFromRow(row) : null;
}

/**
 * The key with the hash and its brand, in one indexed query (key_hash is unique), so
 * authenticating a request costs one round trip.
 */
export async function findKeyWithBrand(
  db: Queryable,
  keyHash: string,
): Promise<{ key: ApiKeyRecord; brand: Brand } | null> {
  const rows = await db.query<KeyAndBrandRow>(
    `SELECT b.*, to_jsonb(k) AS key FROM api_keys k JOIN brands b ON b.id = k.brand_id WHERE k.key_hash = $1`,
    [keyHash],
  );
  const row = rows[0];
  return row ? { key: keyFromRow(row.key), brand: brandFromRow(row) } : null;
}

/**
 * `findKeyWithBrand` that also counts the request in the brand's window starting at
 * `windowStart` (rate_limit_windows, shared by every process on the database), in the same one
 * statement, so counting costs no extra round trip. Only a key usable at `now` is counted: one
 * that is revoked or expired answers 401, which counts against no brand. The brand's first
 * request of a window also deletes its past windows; the others skip that step, so a brand keeps
 * a row or two. `windowCount` is the brand's count in the window with this request, null when
 * not counted.
 */
export async function findKeyWithBrandCounted(
  db: Queryable,
  keyHash: string,
  windowStart: Date,
  now: Date,
): Promise<{ key: ApiKeyRecord; brand: Brand; windowCount: number | null } | null> {
  const rows = await db.query<KeyAndBrandRow & { window_count: number | null }>(
    `WITH usable AS (
       SELECT brand_id FROM api_keys
       WHERE key_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3)
     ),
     counted AS (
       INSERT INTO rate_limit_windows AS w (brand_id, window_start, count)
       SELECT brand_id, $2, 1 FROM usable
       ON CONFLICT (brand_id, window_start) DO UPDATE SET count = w.count + 1
       RETURNING w.count
     ),
     past AS (
       DELETE FROM rate_limit_windows w USING usable
       WHERE (SELECT count FROM counted) = 1 AND w.brand_id = usable.brand_id AND w.window_start < $2::timestamptz - interval '1 minute'
     )
     SELECT b.*, to_jsonb(k) AS key, (SELECT count FROM counted) AS window_count
     FROM api_keys k JOIN brands b ON b.id = k.brand_id WHERE k.key_hash = $1`,
    [keyHash, windowStart, now],
  );
  const row = rows[0];
  return row ? { key: keyFromRow(row.key), brand: brandFromRow(row), windowCount: row.window_count } : null;
}

/** The brand's key with the id, locked until the transaction ends (a revocation checks it first), or null. */
export async function lockBrandKey(db: Queryable, brandId: string, keyId: string): Promise<ApiKeyRecord | null> {
  const [row] = await db.query("SELECT * FROM api_keys WHERE id = $1 AND brand_id = $2 FOR UPDATE", [keyId, brandId]);
  return row ? keyFromRow(row) : null;
}

/** Returns false when no such key exists. Revoking twice keeps the first revocation time. */
export async function revokeKey(db: Queryable, keyId: string, at: Date): Promise<boolean> {
  const rows = await db.query("UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1 RETURNING id", [
    keyId,
    at,
  ]);
  return rows.length > 0;
}

/**
 * A brand's keys (of one environment, when given), oldest first, revoked and expired ones
 * included: at most `limit`, every key usable at `now` first (the cap keeps them within it) and
 * then the most recently created others, so a brand that revoked thousands still gets its list.
 */
export async function listKeys(
  db: Queryable,
  brandId: string,
  { limit, now, environment }: { limit: number; now: Date; environment?: Mode },
): Promise<ApiKeyRecord[]> {
  const rows = await db.query(
    // Unrevoked keys (partial index api_keys_brand_unrevoked) and only the newest `limit` revoked
    // ones (api_keys_brand, read backwards): the revoked, which grow without bound, are never all read.
    `SELECT * FROM (
       SELECT * FROM (
         (SELECT * FROM api_keys WHERE brand_id = $1 AND revoked_at IS NULL AND ($4::text IS NULL OR environment = $4))
         UNION ALL
         (SELECT * FROM api_keys WHERE brand_id = $1 AND revoked_at IS NOT NULL AND ($4::text IS NULL OR environment = $4)
          ORDER BY created_at DESC, id DESC LIMIT $2)
       ) candidates
       ORDER BY (revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3)) DESC, created_at DESC, id DESC
       LIMIT $2
     ) k ORDER BY created_at, id`,
    [brandId, limit, now, environment ?? null],
  );
  return rows.map(keyFromRow);
}

/** The brand's keys usable at `now` (neither revoked nor expired), both environments: what the key cap counts. */
export async function usableKeyCount(db: Queryable, brandId: string, now: Date): Promise<number> {
  const [row] = await db.query<{ count: string | number }>(
    `SELECT count(*) AS count FROM api_keys WHERE brand_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`,
    [brandId, now],
  );
  return Number(row?.count ?? 0);
}

/** Revokes the key with this hash; returns its id, or null when no key has it. */
export async function revokeKeyByHash(db: Queryable, keyHash: string, at: Date): Promise<string | null> {
  const rows = await db.query<{ id: string }>(
    "UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2) WHERE key_hash = $1 RETURNING id",
    [keyHash, at],
  );
  return rows[0]?.id ?? null;
}

/**
 * Records the key's use at `at`, unless a use less than `freshMs` before `at` is recorded already
 * (by this process or another): so several processes together write a key about once per
 * `freshMs`. True when written.
 */
export async function markKeyUsed(db: Queryable, keyId: string, at: Date, freshMs: number): Promise<boolean> {
  const rows = await db.query(
    "UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3) RETURNING 1",
    [keyId, at, new Date(at.getTime() - freshMs)],
  );
  return rows.length > 0;
}
