/**
 * The dynamic mock's keys: any well-formed key is accepted, and the first request with a key
 * makes it a brand of its own (the key's mode, every scope), with the demo brand's plan and
 * limits, so that the server's own guard then finds it. At most `maxKeys` keys are kept: a new
 * key past that removes the one unused the longest, with everything of its brand
 * (forget-brand.ts). Everything goes when the mock stops: its database is in memory.
 */
import { randomUUID } from "node:crypto";
import { hashApiKey, parseApiKey } from "../server/domain/keys.ts";
import { ALL_SCOPES, type Vertical } from "../server/domain/types.ts";
import type { Clock } from "../server/services/context.ts";
import { type BrandInput, createBrand } from "../server/services/operator.ts";
import type { Database } from "../server/store/database.ts";
import { insertKey } from "../server/store/keys.ts";
import { forgetBrand } from "./forget-brand.ts";

/**
 * The brand a key plays: the demo brand's plan and wallet (services/operator.ts), the limits a
 * new brand gets (100 requests a minute, 3 active streams per mode).
 */
export const MOCK_BRAND = {
  plan: "growth",
  credits_cents: 100_000,
  rate_limit_per_minute: 100,
  max_active_streams: 3,
} as const satisfies Partial<BrandInput>;

/** Keys the dynamic mock keeps by default (README, The mock). */
export const DEFAULT_MOCK_KEYS = 100;

export interface MockKeysOptions {
  /** The vertical of every key's brand (`--vertical`). */
  vertical: Vertical;
  /** Keys kept at once; the one unused the longest goes first. */
  maxKeys?: number;
  clock: Clock;
  /** Told when an evicted key's brand could not be removed (the mock logs it). */
  onForgetError?: (error: unknown) => void;
  /** Run before a brand is removed: what is still queued for it is written first (the request log's batch). */
  beforeForget?: () => Promise<void>;
}

export class MockKeys {
  /** By the key's hash, the brand it made; in the order of last use, oldest first. */
  readonly #brands = new Map<string, Promise<string>>();
  readonly #db: Database;
  readonly #options: Required<MockKeysOptions>;

  constructor(
    db: Database,
    {
      maxKeys = DEFAULT_MOCK_KEYS,
      onForgetError = () => undefined,
      beforeForget = async () => undefined,
      ...options
    }: MockKeysOptions,
  ) {
    if (!Number.isInteger(maxKeys) || maxKeys < 1)
      throw new Error(`MockKeys: maxKeys must be 1 or more, got ${maxKeys}`);
    this.#db = db;
    this.#options = { maxKeys, onForgetError, beforeForget, ...options };
  }

  /** Keys held now. */
  get size(): number {
    return this.#brands.size;
  }

  /**
   * The id of the brand of `key` (a well-formed key), made on its first use. Each use makes the
   * key the newest; a new key past the bound removes the oldest one's brand first.
   */
  async brandOf(key: string): Promise<string> {
    const hash = hashApiKey(key);
    const known = this.#brands.get(hash);
    if (known) {
      this.#brands.delete(hash);
      this.#brands.set(hash, known);
      return known;
    }
    const evicted = [...this.#brands.entries()].slice(0, Math.max(0, this.#brands.size + 1 - this.#options.maxKeys));
    for (const [oldHash] of evicted) this.#brands.delete(oldHash);
    const made = (async () => {
      for (const [, brand] of evicted) await this.#forget(brand);
      return this.#provision(key, hash);
    })();
    this.#brands.set(hash, made);
    // A key that could not be made is tried again on its next use.
    made.catch(() => {
      if (this.#brands.get(hash) === made) this.#brands.delete(hash);
    });
    return made;
  }

  /** Removes an evicted key's brand; a failure is reported and leaves its rows, never the new key unmade. */
  async #forget(brand: Promise<string>): Promise<void> {
    const id = await brand.catch(() => null);
    if (!id) return;
    await this.#options
      .beforeForget()
      .then(() => forgetBrand(this.#db, id))
      .catch(this.#options.onForgetError);
  }

  async #provision(key: string, hash: string): Promise<string> {
    const environment = parseApiKey(key);
    if (!environment) throw new Error("MockKeys: not a well-formed key");
    const now = this.#options.clock();
    const lastFour = key.slice(-4);
    return this.#db.transaction(async (tx) => {
      const brand = await createBrand(
        tx,
        { name: `Mock brand (svc_${environment}_…${lastFour})`, vertical: this.#options.vertical, ...MOCK_BRAND },
        now,
      );
      await insertKey(
        tx,
        {
          id: randomUUID(),
          brandId: brand.id,
          name: "Mock key",
          environment,
          scopes: [...ALL_SCOPES],
          lastFour,
          createdAt: now,
          expiresAt: null,
          revokedAt: null,
        },
        hash,
      );
      return brand.id;
    });
  }
}
