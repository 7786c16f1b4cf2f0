import { hashApiKey, keyUsableAt, parseApiKey } from "../domain/keys.ts";
import { ApiError } from "../domain/errors.ts";
import type { Mode, Scope } from "../domain/types.ts";
import type { CallerBrand, KeyWithBrand } from "../store/key-memo.ts";
import type { RequestWindows } from "../store/request-windows.ts";

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
export class KnownKeyRefused extends ApiError {
  readonly key: KnownKey;
  constructor(key: KnownKey) {
    super("unauthorized");
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
 * Resolves `Authorization: Bearer <key>` and counts the request in its brand's rate-limit window
 * (store/request-windows.ts says where). Missing, malformed, unknown, revoked and expired keys all
 * raise the same refusal, so the 401 bodies are byte-identical and reveal nothing; a request
 * answered 401 is counted nowhere. `count` is the brand's count in the window, this request included.
 */
export async function authenticate(
  windows: RequestWindows,
  header: string | undefined,
  now: Date,
): Promise<{ caller: Caller; count: number }> {
  // Found by its hash, so the stored hash equals the computed one: nothing is left to compare.
  const counted = await windows.findKeyCounted(bearerKeyHash(header), now);
  const caller = callerOf(counted?.found ?? null, now);
  // Counted exactly when the key is usable at `now`, which callerOf has just checked.
  if (counted?.count == null) throw new ApiError("unauthorized");
  return { caller, count: counted.count };
}

function bearerKeyHash(header: string | undefined): string {
  const key = wellFormedBearerKey(header);
  if (!key) throw new ApiError("unauthorized");
  return hashApiKey(key);
}

function callerOf(found: KeyWithBrand | null, now: Date): Caller {
  if (!found) throw new ApiError("unauthorized");
  const { key: record, brand } = found;
  if (!keyUsableAt(record, now))
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
