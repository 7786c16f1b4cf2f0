import type { Brand, Plan, Vertical } from "../domain/types.ts";
import { dateOf } from "./columns.ts";
import type { Queryable } from "./database.ts";

export interface BrandRow {
  id: string;
  name: string;
  vertical: Vertical;
  plan: Plan;
  credits_cents: string | number;
  credits_held_cents: string | number;
  plan_minutes: number;
  minutes_used: number;
  rate_limit_per_minute: number;
  max_active_streams: number;
  created_at: Date;
}

export function brandFromRow(row: BrandRow): Brand {
  return {
    id: row.id,
    name: row.name,
    vertical: row.vertical,
    plan: row.plan,
    creditsCents: Number(row.credits_cents),
    creditsHeldCents: Number(row.credits_held_cents),
    planMinutes: row.plan_minutes,
    minutesUsed: row.minutes_used,
    rateLimitPerMinute: row.rate_limit_per_minute,
    maxActiveStreams: row.max_active_streams,
    createdAt: dateOf(row.created_at),
  };
}

export async function insertBrand(db: Queryable, brand: Brand): Promise<Brand> {
  const [row] = await db.query<BrandRow>(
    `INSERT INTO brands (id, name, vertical, plan, credits_cents, credits_held_cents, plan_minutes, minutes_used,
                         rate_limit_per_minute, max_active_streams, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
    [
      brand.id,
      brand.name,
      brand.vertical,
      brand.plan,
      brand.creditsCents,
      brand.creditsHeldCents,
      brand.planMinutes,
      brand.minutesUsed,
      brand.rateLimitPerMinute,
      brand.maxActiveStreams,
      brand.createdAt,
    ],
  );
  return brandFromRow(row!);
}

/** A brand as it is; to decide on its streams or wallet, lock it instead (store/brand-lock.ts). */
export async function findBrand(db: Queryable, id: string): Promise<Brand | null> {
  const rows = await db.query<BrandRow>("SELECT * FROM brands WHERE id = $1", [id]);
  return rows[0] ? brandFromRow(rows[0]) : null;
}

/** Every brand, oldest first. */
export async function listBrands(db: Queryable): Promise<Brand[]> {
  const rows = await db.query<BrandRow>("SELECT * FROM brands ORDER BY created_at, id");
  return rows.map(brandFromRow);
}

export async function countBrands(db: Queryable): Promise<number> {
  const [row] = await db.query<{ count: number }>("SELECT count(*)::int AS count FROM brands");
  return row!.count;
}

export async function updateBrand(db: Queryable, brand: Brand): Promise<Brand> {
  const [row] = await db.query<BrandRow>(
    `UPDATE brands SET plan = $2, credits_cents = $3, credits_held_cents = $4, plan_minutes = $5, minutes_used = $6,
                       rate_limit_per_minute = $7, max_active_streams = $8
     WHERE id = $1 RETURNING *`,
    [
      brand.id,
      brand.plan,
      brand.creditsCents,
      brand.creditsHeldCents,
      brand.planMinutes,
      brand.minutesUsed,
      brand.rateLimitPerMinute,
      brand.maxActiveStreams,
    ],
  );
  return brandFromRow(row!);
}

/** Wallet and minutes change by deltas so concurrent settlements of one brand never overwrite each other. */
export async function adjustWallet(
  db: Queryable,
  brandId: string,
  delta: { creditsCents?: number; creditsHeldCents?: number; minutesUsed?: number },
): Promise<void> {
  await db.query(
    `UPDATE brands SET credits_cents = credits_cents + $2, credits_held_cents = credits_held_cents + $3,
                       minutes_used = minutes_used + $4
     WHERE id = $1`,
    [brandId, delta.creditsCents ?? 0, delta.creditsHeldCents ?? 0, delta.minutesUsed ?? 0],
  );
}
