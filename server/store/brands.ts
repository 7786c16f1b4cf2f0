import { BRANDS, type Brand } from "../domain/types.ts";
import type { Queryable } from "./database.ts";
import { insertRow, pick, readRow, updateRows } from "./statements.ts";

export const brandFromRow = (row: object): Brand => readRow(BRANDS, row);

export async function insertBrand(db: Queryable, brand: Brand): Promise<Brand> {
  const { text, params } = insertRow(BRANDS, brand, "RETURNING *");
  const [row] = await db.query(text, params);
  return brandFromRow(row!);
}

/** A brand as it is; to decide on its streams or wallet, lock it instead (store/brand-lock.ts). */
export async function findBrand(db: Queryable, id: string): Promise<Brand | null> {
  const rows = await db.query("SELECT * FROM brands WHERE id = $1", [id]);
  return rows[0] ? brandFromRow(rows[0]) : null;
}

/** Every brand, oldest first. */
export async function listBrands(db: Queryable): Promise<Brand[]> {
  const rows = await db.query("SELECT * FROM brands ORDER BY created_at, id");
  return rows.map(brandFromRow);
}

export async function countBrands(db: Queryable): Promise<number> {
  const [row] = await db.query<{ count: number }>("SELECT count(*)::int AS count FROM brands");
  return row!.count;
}

/** What an operator's change of a brand may write: its plan and limits, and its wallet. */
const OPERATOR_FIELDS = [
  "plan",
  "creditsCents",
  "creditsHeldCents",
  "planMinutes",
  "minutesUsed",
  "rateLimitPerMinute",
  "maxActiveStreams",
] as const satisfies ReadonlyArray<keyof Brand>;

export async function updateBrand(db: Queryable, brand: Brand): Promise<Brand> {
  const { text, params } = updateRows(BRANDS, { id: brand.id }, pick(brand, OPERATOR_FIELDS), "RETURNING *")!;
  const [row] = await db.query(text, params);
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
