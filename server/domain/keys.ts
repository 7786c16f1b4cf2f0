import { hash, randomBytes, timingSafeEqual } from "node:crypto";
import { apiKeyPattern } from "../../generated/limits.ts";
import type { ApiKeyRecord, Mode } from "./types.ts";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `svc_live_`/`svc_test_` followed by 32 random base62 characters. */
export function generateApiKey(environment: Mode): string {
  return `svc_${environment}_${randomBase62(32)}`;
}

function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    // Rejection sampling keeps every character equally likely (248 = 4 × 62).
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/**
 * What a member sees to tell keys apart: `svc_test_…abcd`, the mode and the key's last four
 * characters; null for a key whose last four were not kept.
 */
export function keyHint(environment: Mode, lastFour: string | null): string | null {
  return lastFour === null ? null : `svc_${environment}_…${lastFour}`;
}

/** The environment a well-formed key belongs to, or null when the key is malformed. */
export function parseApiKey(key: string): Mode | null {
  const match = apiKeyPattern.exec(key);
  return match ? (match[1] as Mode) : null;
}

/** Only this hash is stored; the key cannot be recovered from it. */
export function hashApiKey(key: string): string {
  // The one-shot form: a quarter of createHash's cost, on every authenticated request.
  return hash("sha256", key, "hex");
}

/** True when `Authorization: Bearer <token>` carries exactly `secret` (an operator's token), compared in constant time. */
export function bearerTokenMatches(header: string | undefined, secret: string): boolean {
  const token = /^Bearer (\S+)$/.exec(header ?? "")?.[1] ?? "";
  return constantTimeEqual(token, secret);
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = hash("sha256", a, "buffer");
  const right = hash("sha256", b, "buffer");
  return timingSafeEqual(left, right);
}

/** True while a key may authenticate: not revoked, and not past its expiry at `now`. */
export function keyUsableAt(key: Pick<ApiKeyRecord, "revokedAt" | "expiresAt">, now: Date): boolean {
  return key.revokedAt === null && (key.expiresAt === null || key.expiresAt.getTime() > now.getTime());
}
