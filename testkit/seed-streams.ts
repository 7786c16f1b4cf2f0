import type { Queryable } from "../server/store/database.ts";

/**
 * Many finished streams for one brand and mode, for tests and the benchmark (never the API,
 * which would take minutes for 100,000): oldest first, in statements of 500 (the size the
 * triggers of migration 005 handle fastest, each its own transaction when `db` is a database),
 * `spanMs` apart in all, ending a minute before `now`: one in ten in `error`, the rest `ended`
 * after ten minutes live, platforms and viewer counts in turn. Returns how many were inserted.
 */
export async function seedStreams(
  db: Queryable,
  {
    brandId,
    mode = "test",
    count,
    now,
    creatorId,
    spanMs = 29 * 86_400_000,
  }: { brandId: string; mode?: "live" | "test"; count: number; now: Date; creatorId: string; spanMs?: number },
): Promise<number> {
  let inserted = 0;
  for (let from = 1; from <= count; from += SEED_STATEMENT) {
    const [row] = await db.query<{ inserted: number }>(
      `WITH inserted AS (
         INSERT INTO streams (id, brand_id, mode, status, creator_id, product_name, platform, vertical, room_name,
                              viewer_count, created_at, started_at, ended_at)
         SELECT gen_random_uuid(), $1, $2, CASE WHEN i % 10 = 0 THEN 'error' ELSE 'ended' END, $3, 'Seeded stream ' || i,
                (ARRAY['youtube', 'tiktok', 'twitch', 'kick'])[1 + i % 4], 'live-commerce', 'room_seed_' || i, (i * 37) % 500,
                t, t, t + CASE WHEN i % 10 = 0 THEN interval '30 seconds' ELSE interval '10 minutes 5 seconds' END
         FROM generate_series($7::int, $8::int) i,
              LATERAL (SELECT date_trunc('milliseconds', $5::timestamptz - interval '1 minute' - (($4::int - i) * ($6::float8 / $4::int)) * interval '1 millisecond') AS t) times
         ORDER BY i
         RETURNING 1
       ) SELECT count(*)::int AS inserted FROM inserted`,
      [brandId, mode, creatorId, count, now, spanMs, from, Math.min(count, from + SEED_STATEMENT - 1)],
    );
    inserted += row!.inserted;
  }
  return inserted;
}

const SEED_STATEMENT = 500;
