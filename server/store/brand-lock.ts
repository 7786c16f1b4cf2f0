import type { Brand } from "../domain/types.ts";
import { brandFromRow } from "./brands.ts";
import type { Queryable } from "./database.ts";

/**
 * The brand lock: the brand's row, locked until the transaction ends, and read under the lock.
 * Whatever decides on a brand's streams or wallet takes it first, so such decisions of one brand
 * are made one at a time, across processes on one PostgreSQL too:
 * - a stream start (services/start-checks.ts): the concurrency limit and the wallet hold;
 * - an operator's brand change (services/operator.ts): credits against what is held.
 * Settlement changes the wallet by deltas (adjustWallet), whose UPDATE takes the same row lock;
 * the sweeper takes those in brand order so that two processes cannot deadlock
 * (services/lifecycle.ts). Null when the brand does not exist.
 */
export async function lockBrand(tx: Queryable, brandId: string): Promise<Brand | null> {
  const rows = await tx.query("SELECT * FROM brands WHERE id = $1 FOR UPDATE", [brandId]);
  return rows[0] ? brandFromRow(rows[0]) : null;
}
