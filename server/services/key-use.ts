import type { Queryable } from "../store/database.ts";
import { markKeyUsed } from "../store/keys.ts";

/** A key's last use is written at most this often: the dashboard shows it to the minute. */
export const KEY_USE_EVERY_MS = 60_000;

export type KeyUseRecorder = (keyId: string, at: Date) => Promise<void>;

/**
 * Records API keys' last use (the dashboard's key list) without a write per request: this
 * process writes a key's use at most once per `everyMs`, and the UPDATE itself skips a key whose
 * use another process wrote within that time. A failed write is reported, never the request's
 * failure: the use is written again a minute later.
 */
export function keyUseRecorder(
  db: Queryable,
  { everyMs = KEY_USE_EVERY_MS, onError }: { everyMs?: number; onError(error: unknown): void },
): KeyUseRecorder {
  // When this process last wrote each key, oldest first; keys written longer ago are dropped, so
  // the map holds only the keys used within the last `everyMs`.
  const written = new Map<string, number>();
  return async function recordKeyUse(keyId, at) {
    const now = at.getTime();
    const last = written.get(keyId);
    if (last !== undefined && now - last < everyMs) return;
    for (const [id, time] of written) {
      if (now - time < everyMs) break;
      written.delete(id);
    }
    written.delete(keyId);
    written.set(keyId, now);
    try {
      await markKeyUsed(db, keyId, at, everyMs);
    } catch (error) {
      onError(error);
    }
  };
}
