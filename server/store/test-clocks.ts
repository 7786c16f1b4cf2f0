import type { Queryable } from "./database.ts";

/**
 * The brands' test clocks (migration 032): how many seconds a brand's test mode runs ahead of the
 * real clock. No row is 0. services/test-clock.ts turns the offset into the scope's clock.
 */

/** The brand's test-clock offset in seconds (0 when it never advanced). */
export async function testClockOffset(db: Queryable, brandId: string): Promise<number> {
  const [row] = await db.query<{ offset_seconds: string | number }>(TEST_CLOCK_OFFSET, [brandId]);
  return row ? Number(row.offset_seconds) : 0;
}

const TEST_CLOCK_OFFSET = "SELECT offset_seconds FROM test_clocks WHERE brand_id = $1";

/**
 * Moves the brand's test clock `seconds` forward (never back) and answers the new offset. The
 * caller holds the brand's lock (store/brand-lock.ts), so advances of one brand are made one at a
 * time, across processes too.
 */
export async function advanceTestClockOffset(
  db: Queryable,
  brandId: string,
  seconds: number,
  at: Date,
): Promise<number> {
  const [row] = await db.query<{ offset_seconds: string | number }>(
    `INSERT INTO test_clocks (brand_id, offset_seconds, advanced_at) VALUES ($1, $2, $3)
     ON CONFLICT (brand_id) DO UPDATE SET offset_seconds = test_clocks.offset_seconds + excluded.offset_seconds,
                                          advanced_at = excluded.advanced_at
     RETURNING offset_seconds`,
    [brandId, seconds, at],
  );
  return Number(row!.offset_seconds);
}

/**
 * SQL: the test clock's offset of the brand `brand` as an interval when `mode` is `'test'`, a
 * zero interval otherwise (live mode is never moved). `brand` and `mode` are SQL expressions.
 */
export function clockOffsetSql(brand: string, mode: string): string {
  return `(coalesce((SELECT tc.offset_seconds FROM test_clocks tc WHERE tc.brand_id = ${brand} AND ${mode} = 'test'), 0) * interval '1 second')`;
}
