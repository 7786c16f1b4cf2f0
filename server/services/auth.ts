import { hashApiKey, parseApiKey } from "../domain/keys.ts";
import type { Brand, Mode, Scope } from "../domain/types.ts";
import { ApiError } from "../errors.ts";
import type { Queryable } from "../store/database.ts";
import { findKeyWithBrand } from "../store/keys.ts";

export interface Caller {
  keyId: string;
  brand: Brand;
  mode: Mode;
  scopes: readonly Scope[];
}

/**
 * Resolves `Authorization: Bearer <key>`. Missing, malformed, unknown, revoked and expired keys
 * all raise the same ApiError, so the 401 bodies are byte-identical and reveal nothing.
 */
export async function authenticate(db: Queryable, header: string | undefined, now: Date): Promise<Caller> {
  const key = wellFormedBearerKey(header);
  if (!key) throw new ApiError("unauthorized");
  const keyHash = hashApiKey(key);
  // Found by its hash, so the stored hash equals the computed one: nothing is left to compare.
  const found = await findKeyWithBrand(db, keyHash);
  if (!found) throw new ApiError("unauthorized");
  const { key: record, brand } = found;
  if (record.revokedAt || (record.expiresAt && record.expiresAt.getTime() <= now.getTime())) throw new ApiError("unauthorized");
  return { keyId: record.id, brand, mode: record.environment, scopes: record.scopes };
}

/**
 * The key of `Authorization: Bearer <key>` when it has the shape of an API key (`svc_test_` or
 * `svc_live_` and 32 base62 characters), else null. The mock accepts exactly these keys.
 */
export function wellFormedBearerKey(header: string | undefined): string | null {
  const key = /^Bearer ([^\s]+)$/.exec(header ?? "")?.[1];
  return key && parseApiKey(key) ? key : null;
}
