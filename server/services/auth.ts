import { hashApiKey, parseApiKey } from "../domain/keys.ts";
import { DomainError } from "../domain/errors.ts";
import type { Mode, Scope } from "../domain/types.ts";
import type { Queryable } from "../store/database.ts";
import { findKeyWithBrand, findKeyWithBrandCounted } from "../store/keys.ts";
import { type CallerBrand, type KeyWithBrand, keyMemoOf } from "./key-memo.ts";

export interface Caller {
  keyId: string;
  brand: CallerBrand;
  mode: Mode;
  scopes: readonly Scope[];
  /** The key's name and last four characters, for the request log. */
  keyName: string;
  keyLastFour: string | null;
}

/** A real key of a brand, as the request log names it: whether or not it was usable. */
export interface KnownKey {
  keyId: string;
  brandId: string;
  mode: Mode;
  name: string;
  lastFour: string | null;
}

/**
 * The 401 of a key that exists but is revoked or expired: the same refusal as any other (the answer
 * reveals nothing), carrying the key so that the request is logged for its brand.
 */
export class KnownKeyRefused extends DomainError {
  readonly key: KnownKey;
  constructor(key: KnownKey) {
    super("unauthenticated");
    this.key = key;
  }
}

/** The key a caller authenticated with at `at`, as the request log names it. */
export function knownKeyOf(caller: Caller, at: Date): KnownKey & { at: Date } {
  return {
    keyId: caller.keyId,
    brandId: caller.brand.id,
    mode: caller.mode,
    name: caller.keyName,
    lastFour: caller.keyLastFour,
    at,
  };
}

/**
 * Resolves `Authorization: Bearer <key>`. Missing, malformed, unknown, revoked and expired keys
 * all raise the same refusal, so the 401 bodies are byte-identical and reveal nothing.
 */
export async function authenticate(db: Queryable, header: string | undefined, now: Date): Promise<Caller> {
  // Found by its hash, so the stored hash equals the computed one: nothing is left to compare.
  const keyHash = bearerKeyHash(header);
  const memo = keyMemoOf(db);
  const found = memo
    ? await memo.find(keyHash, () => findKeyWithBrand(db, keyHash))
    : await findKeyWithBrand(db, keyHash);
  return callerOf(found, now);
}

/**
 * `authenticate`, and the request counted in its brand's rate-limit window (the one-minute window
 * starting at `windowStart`) in the database, in the same one statement: how every process on
 * one PostgreSQL shares a brand's limit. A request answered 401 is not counted. `count` is the
 * brand's count in the window, this request included.
 */
export async function authenticateAndCount(
  db: Queryable,
  header: string | undefined,
  now: Date,
  windowStart: Date,
): Promise<{ caller: Caller; count: number }> {
  const found = await findKeyWithBrandCounted(db, bearerKeyHash(header), windowStart, now);
  const caller = callerOf(found, now);
  // Counted exactly when the key is usable at `now`, which callerOf has just checked.
  const count = found?.windowCount ?? null;
  if (count === null) throw new DomainError("unauthenticated");
  return { caller, count };
}

function bearerKeyHash(header: string | undefined): string {
  const key = wellFormedBearerKey(header);
  if (!key) throw new DomainError("unauthenticated");
  return hashApiKey(key);
}

function callerOf(found: KeyWithBrand | null, now: Date): Caller {
  if (!found) throw new DomainError("unauthenticated");
  const { key: record, brand } = found;
  if (record.revokedAt || (record.expiresAt && record.expiresAt.getTime() <= now.getTime()))
    throw new KnownKeyRefused({
      keyId: record.id,
      brandId: brand.id,
      mode: record.environment,
      name: record.name,
      lastFour: record.lastFour,
    });
  const { id, vertical, plan, rateLimitPerMinute } = brand;
  return {
    keyId: record.id,
    brand: { id, vertical, plan, rateLimitPerMinute },
    mode: record.environment,
    scopes: record.scopes,
    keyName: record.name,
    keyLastFour: record.lastFour,
  };
}

/**
 * The key of `Authorization: Bearer <key>` when it has the shape of an API key (`svc_test_` or
 * `svc_live_` and 32 base62 characters), else null. The mock accepts exactly these keys.
 */
export function wellFormedBearerKey(header: string | undefined): string | null {
  const key = /^Bearer ([^\s]+)$/.exec(header ?? "")?.[1];
  return key && parseApiKey(key) ? key : null;
}
