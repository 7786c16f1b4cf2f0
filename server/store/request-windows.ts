/**
 * How a request's key is found and where requests are counted in their one-minute windows,
 * decided once per database by who else may write it:
 * - PostgreSQL is shared by every process of a deployment: a brand's and a session's windows are
 *   rows, the brand's counted in the same statement that finds the key; no key is remembered, as
 *   another process may revoke it and the spec refuses a revoked key at once (§5).
 * - The embedded database belongs to this process: windows are counted in memory and keys are
 *   remembered (key-memo.ts) until a write that changes keys or brands forgets them.
 */
import { keyUsableAt } from "../domain/keys.ts";
import { FixedWindowCounter, windowStartOf } from "../domain/rate-window.ts";
import type { Database } from "./database.ts";
import { brandWindowCount } from "./dashboard-reads.ts";
import { KeyMemo, type KeyWithBrand } from "./key-memo.ts";
import { findKeyWithBrand, findKeyWithBrandCounted } from "./keys.ts";
import { countSessionRequest } from "./dashboard-sessions.ts";

export interface RequestWindows {
  /**
   * The key of `keyHash` with its brand, and the request counted in the brand's window when the
   * key is usable at `now` (`count` is then the brand's count, this request included; else null,
   * and nothing is counted). Null for an unknown key.
   */
  findKeyCounted(keyHash: string, now: Date): Promise<{ found: KeyWithBrand; count: number | null } | null>;
  /** The brand's count in the window of `now`, without counting. */
  brandCount(brandId: string, now: Date): Promise<number>;
  /** Counts a request of the session (by its id's hash); returns its count in the window, this one included. */
  countSession(idHash: string, now: Date): Promise<number>;
  /** Forgets what is remembered of keys and brands: after a write that may have changed them. */
  forgetKeys(): void;
}

function sharedWindows(db: Database): RequestWindows {
  return {
    async findKeyCounted(keyHash, now) {
      const row = await findKeyWithBrandCounted(db, keyHash, windowStartOf(now), now);
      return row && { found: { key: row.key, brand: row.brand }, count: row.windowCount };
    },
    brandCount: (brandId, now) => brandWindowCount(db, brandId, windowStartOf(now)),
    countSession: (idHash, now) => countSessionRequest(db, idHash, windowStartOf(now)),
    forgetKeys() {},
  };
}

function processWindows(db: Database): RequestWindows {
  const memo = new KeyMemo();
  const counter = new FixedWindowCounter();
  return {
    async findKeyCounted(keyHash, now) {
      const found = await memo.find(keyHash, () => findKeyWithBrand(db, keyHash));
      if (!found) return null;
      return { found, count: keyUsableAt(found.key, now) ? counter.hit(`brand:${found.brand.id}`, now) : null };
    },
    brandCount: async (brandId, now) => counter.peek(`brand:${brandId}`, now),
    countSession: async (idHash, now) => counter.hit(`session:${idHash}`, now),
    forgetKeys: () => memo.forget(),
  };
}

const windowsOfDatabase = new WeakMap<Database, RequestWindows>();

/** The windows of `db`: one per database object, so every app and write on it shares them. */
export function requestWindowsOf(db: Database): RequestWindows {
  let windows = windowsOfDatabase.get(db);
  if (!windows) {
    windows = db.engine === "postgres" ? sharedWindows(db) : processWindows(db);
    windowsOfDatabase.set(db, windows);
  }
  return windows;
}

/** Runs a write that changes keys or brands, then forgets what the windows of `db` remember of them (also after a failure). */
export async function changingKeys<T>(db: Database, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } finally {
    requestWindowsOf(db).forgetKeys();
  }
}
