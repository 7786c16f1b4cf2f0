import type { ApiKeyRecord, Brand } from "../domain/types.ts";

/** What a request's caller carries of its brand: fields that change only through the operator API. */
export type CallerBrand = Pick<Brand, "id" | "vertical" | "plan" | "rateLimitPerMinute">;

export interface KeyWithBrand {
  key: ApiKeyRecord;
  brand: CallerBrand;
}

/** Keys remembered at most; past it the memo starts afresh. */
const MAX_KEYS = 10_000;

/**
 * The one memoised read: an API key with its brand, by the key's hash, which every authenticated
 * request looks up. Kept only where this process owns the database (request-windows.ts), so every
 * write that changes a remembered key or brand passes through `changingKeys` and forgets it:
 * revoking a key and changing a brand (services/operator.ts). Expiry needs no write: it is checked
 * against the clock on each request. An unknown key is not remembered, so a new key needs no
 * `forget()`.
 */
export class KeyMemo {
  readonly #found = new Map<string, KeyWithBrand>();
  /** Bumped by forget(), so a read that was running meanwhile is not kept. */
  #generation = 0;

  async find(keyHash: string, read: () => Promise<KeyWithBrand | null>): Promise<KeyWithBrand | null> {
    const known = this.#found.get(keyHash);
    if (known) return known;
    const generation = this.#generation;
    const found = await read();
    if (found && generation === this.#generation) {
      if (this.#found.size >= MAX_KEYS) this.#found.clear();
      this.#found.set(keyHash, found);
    }
    return found;
  }

  /** After a write that may change a remembered key or brand (also after one that failed). */
  forget(): void {
    this.#found.clear();
    this.#generation += 1;
  }
}
