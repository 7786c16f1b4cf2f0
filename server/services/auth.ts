import { constantTimeEqual, hashApiKey, parseApiKey } from "../domain/keys.ts";
import type { Brand, Mode, Scope } from "../domain/types.ts";
import { ApiError } from "../errors.ts";
import { findBrand } from "../store/brands.ts";
import type { Queryable } from "../store/database.ts";
import { findKeyByHash } from "../store/keys.ts";

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
  const match = /^Bearer ([^\s]+)$/.exec(header ?? "");
  const key = match?.[1];
  if (!key || !parseApiKey(key)) throw new ApiError("unauthorized");
  const keyHash = hashApiKey(key);
  const record = await findKeyByHash(db, keyHash);
  if (!record || !constantTimeEqual(record.keyHash, keyHash)) throw new ApiError("unauthorized");
  if (record.revokedAt || (record.expiresAt && record.expiresAt.getTime() <= now.getTime())) throw new ApiError("unauthorized");
  const brand = await findBrand(db, record.brandId);
  if (!brand) throw new ApiError("unauthorized");
  return { keyId: record.id, brand, mode: record.environment, scopes: record.scopes };
}
