import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { periodStart, type Period } from "../domain/analytics.ts";
import { billedMinutes } from "../domain/billing.ts";
import { simulatedViewerCount } from "../domain/lifecycle.ts";
import { type Database, openDatabase } from "../store/database.ts";
import { splitStatements } from "../store/migrate.ts";
import {
  availableEngines,
  CREATOR_ID,
  type Engine,
  scratchPostgresDatabase,
  startTestServer,
  streamBody,
  type TestServer,
} from "../../testkit/harness.ts";
import { seedStreams } from "../../testkit/seed-streams.ts";
import { testDatabaseUrl } from "../config.ts";

const STATUSES = ["preparing", "live", "ended", "error"] as const;

/** What the list must show, read the slow way: every row of the brand and mode, in list order. */
async function listedIds(db: Database, brandId: string, mode: string, status?: string): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM streams WHERE brand_id = $1 AND mode = $2${status ? " AND status = $3" : ""} ORDER BY created_at DESC, id DESC`,
    [brandId, mode, ...(status ? [status] : [])],
  );
  return rows.map((row) => row.id);
}

/** Every brand's counts and positions agree with its rows. */
async function expectListsConsistent(db: Database): Promise<void> {
  const wrongPositions = await db.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM streams s FULL JOIN stream_positions p ON p.stream_id = s.id
     LEFT JOIN (SELECT id, row_number() OVER (PARTITION BY brand_id, mode ORDER BY created_at, id) - 1 AS place FROM streams) r ON r.id = s.id
     WHERE s.id IS NULL OR p.stream_id IS NULL OR p.position <> r.place OR p.brand_id <> s.brand_id OR p.mode <> s.mode`,
  );
  expect(wrongPositions[0]!.count).toBe(0);
  const wrongCounts = await db.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM (
       SELECT brand_id, mode, count(*) FILTER (WHERE status = 'preparing') AS preparing, count(*) FILTER (WHERE status = 'live') AS live,
              count(*) FILTER (WHERE status = 'ended') AS ended, count(*) FILTER (WHERE status = 'error') AS error
       FROM streams GROUP BY brand_id, mode
     ) actual FULL JOIN (SELECT * FROM stream_counts WHERE preparing + live + ended + error > 0) kept USING (brand_id, mode)
     WHERE (actual.preparing, actual.live, actual.ended, actual.error) IS DISTINCT FROM (kept.preparing, kept.live, kept.ended, kept.error)`,
  );
  expect(wrongCounts[0]!.count).toBe(0);
}

/** The totals and pages a key sees, checked against the rows at offsets from the first to past the last. */
async function expectListMatches(server: TestServer, key: string, brandId: string, mode = "test"): Promise<void> {
  for (const status of [undefined, ...STATUSES, "paused"]) {
    const ids = status === "paused" ? [] : await listedIds(server.db, brandId, mode, status);
    for (const offset of [
      0,
      1,
      7,
      Math.floor(ids.length / 2),
      Math.max(0, ids.length - 3),
      ids.length,
      ids.length + 5,
    ]) {
      const query = `limit=5&offset=${offset}${status ? `&status=${status}` : ""}`;
      const response = await server.call("GET", `/api/v1/streams?${query}`, { key });
      expect(response.status, query).toBe(200);
      expect(response.body.total, query).toBe(ids.length);
      expect(
        response.body.streams.map((stream: { id: string }) => stream.id),
        query,
      ).toEqual(ids.slice(offset, offset + 5));
    }
  }
}

describe.each(availableEngines())("GET /streams totals and pages kept by the database (%s)", (engine: Engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ engine });
  });
  afterAll(() => server.close());

  it("are exact after create, end, launch failure and a failure while live", async () => {
    const { brandId, key } = await server.tenant({ max_active_streams: 20 });
    const created: string[] = [];
    for (const platform of ["youtube", "twitch", "kick", "youtube"]) {
      created.push(
        (await server.call("POST", "/api/v1/streams", { key, body: streamBody({ platform }) })).body.stream_id,
      );
    }
    expect(
      (await server.call("POST", "/api/v1/streams", { key, body: streamBody({ product_name: "sim:launch-failed" }) }))
        .status,
    ).toBe(502);
    await server.call("POST", "/api/v1/streams", { key, body: streamBody({ product_name: "sim:fails-live" }) });
    server.clock.advance(5_000);
    await server.call("DELETE", `/api/v1/streams/${created[1]}`, { key });
    await server.sweep();
    const list = await server.call("GET", "/api/v1/streams?status=error", { key });
    expect(list.body.total).toBe(2);
    expect((await server.call("GET", "/api/v1/streams?status=live", { key })).body.total).toBe(3);
    await expectListMatches(server, key, brandId);
    await expectListsConsistent(server.db);
  });

  it("show a create and an end on the very next read, with the read cache warm", async () => {
    const { key } = await server.tenant();
    const first = (await server.call("POST", "/api/v1/streams", { key, body: streamBody() })).body.stream_id;
    for (let i = 0; i < 2; i++)
      expect((await server.call("GET", "/api/v1/streams?status=live&offset=0", { key })).body.total).toBe(1);
    server.clock.advance(1_000);
    const second = (await server.call("POST", "/api/v1/streams", { key, body: streamBody() })).body.stream_id;
    const live = await server.call("GET", "/api/v1/streams?status=live&offset=0", { key });
    expect(live.body.total).toBe(2);
    await server.call("DELETE", `/api/v1/streams/${first}`, { key });
    expect(
      (await server.call("GET", "/api/v1/streams?status=live&offset=0", { key })).body.streams.map(
        (s: { id: string }) => s.id,
      ),
    ).toEqual([second]);
    expect((await server.call("GET", "/api/v1/streams?offset=1&limit=1", { key })).body).toMatchObject({
      total: 2,
      streams: [{ id: first, status: "ended" }],
    });
  });

  it("pages a brand with thousands of streams at any depth, and follows a stream written out of order", async () => {
    const { brandId, key } = await server.tenant({ max_active_streams: 20 });
    await seedStreams(server.db, { brandId, count: 3_000, now: server.clock(), creatorId: CREATOR_ID });
    await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    await expectListMatches(server, key, brandId);
    // Written by another system with an earlier time: it takes its place in the middle.
    await server.db.query(
      `INSERT INTO streams (id, brand_id, mode, status, creator_id, product_name, platform, vertical, room_name, created_at)
       VALUES ($1, $2, 'test', 'ended', $3, 'Dashboard stream', 'youtube', 'live-commerce', 'room_x', $4)`,
      [randomUUID(), brandId, CREATOR_ID, new Date(server.clock().getTime() - 10 * 86_400_000)],
    );
    // And a stream moved in time.
    await server.db.query(
      "UPDATE streams SET created_at = created_at - interval '20 days' WHERE id = (SELECT id FROM streams WHERE brand_id = $1 ORDER BY created_at DESC LIMIT 1)",
      [brandId],
    );
    await expectListMatches(server, key, brandId);
    await expectListsConsistent(server.db);
  });

  it("are exact after a brand's streams are deleted, in part and then all, without touching another brand", async () => {
    const kept = await server.tenant();
    await server.call("POST", "/api/v1/streams", { key: kept.key, body: streamBody() });
    const { brandId, key } = await server.tenant();
    await seedStreams(server.db, { brandId, count: 500, now: server.clock(), creatorId: CREATOR_ID });
    await server.db.query("DELETE FROM streams WHERE brand_id = $1 AND created_at < $2", [
      brandId,
      new Date(server.clock().getTime() - 10 * 86_400_000),
    ]);
    await expectListMatches(server, key, brandId);
    await server.db.query("DELETE FROM streams WHERE brand_id = $1", [brandId]);
    const empty = await server.call("GET", "/api/v1/streams", { key });
    expect(empty.body).toMatchObject({ total: 0, streams: [] });
    await expectListMatches(server, kept.key, kept.brandId);
    await expectListsConsistent(server.db);
  });

  it("keep test and live streams apart", async () => {
    const { brandId } = await server.tenant();
    const live = (await server.key(brandId, { environment: "live" })).key;
    const test = (await server.key(brandId, { environment: "test" })).key;
    await server.call("POST", "/api/v1/streams", { key: live, body: streamBody({ duration_minutes: 30 }) });
    await server.call("POST", "/api/v1/streams", { key: test, body: streamBody() });
    await server.call("POST", "/api/v1/streams", { key: test, body: streamBody() });
    expect((await server.call("GET", "/api/v1/streams", { key: live })).body.total).toBe(1);
    expect((await server.call("GET", "/api/v1/streams", { key: test })).body.total).toBe(2);
    await expectListMatches(server, live, brandId, "live");
  });
});

describe.each(availableEngines())("migration 005 on a database that already has streams (%s)", (engine: Engine) => {
  it("counts and positions the streams that were there before it", async () => {
    const scratch = engine === "postgres" ? await scratchPostgresDatabase(testDatabaseUrl()!) : null;
    const db = await openDatabase(scratch?.url ?? "memory:");
    try {
      const dir = new URL("../store/migrations/", import.meta.url);
      const files = readdirSync(dir)
        .filter((name) => name.endsWith(".sql"))
        .sort();
      const apply = async (name: string) => {
        for (const statement of splitStatements(readFileSync(new URL(name, dir), "utf8"))) await db.query(statement);
      };
      for (const name of files.filter((file) => file < "005")) await apply(name);
      const brands = [randomUUID(), randomUUID()];
      for (const id of brands) {
        await db.query(
          "INSERT INTO brands (id, name, vertical, plan, plan_minutes, created_at) VALUES ($1, 'b', 'live-commerce', 'growth', 0, now())",
          [id],
        );
        await seedStreams(db, { brandId: id, count: 300, now: new Date(), creatorId: CREATOR_ID });
        await seedStreams(db, { brandId: id, mode: "live", count: 40, now: new Date(), creatorId: CREATOR_ID });
      }
      for (const name of files.filter((file) => file.startsWith("005"))) await apply(name);
      await expectListsConsistent(db);
      const [counts] = await db.query<{ ended: string | number; error: string | number }>(
        "SELECT ended, error FROM stream_counts WHERE brand_id = $1 AND mode = 'test'",
        [brands[0]],
      );
      expect([Number(counts!.ended), Number(counts!.error)]).toEqual([270, 30]);
    } finally {
      await db.close();
      await scratch?.drop();
    }
  });
});

/**
 * GET /analytics as it was answered before its totals moved into SQL and its list was streamed
 * out (services/analytics.ts and presenters.ts of that build): every stream of the period read,
 * summed here, and the body written by JSON.stringify. The new answer must be the same bytes.
 */
async function analyticsAsBefore(
  server: TestServer,
  brandId: string,
  mode: string,
  period: Period,
  streamId: string | null,
): Promise<string> {
  const now = server.clock();
  const rows = await server.db.query<{
    id: string;
    status: string;
    viewer_count: number;
    started_at: Date | null;
    ended_at: Date | null;
    platform: string;
    vertical: string;
  }>(
    `SELECT id, status, viewer_count, started_at, ended_at, platform, vertical FROM streams
     WHERE brand_id = $1 AND mode = $2 AND created_at >= $3${streamId ? " AND id = $4" : ""} ORDER BY created_at DESC, id DESC`,
    [brandId, mode, periodStart(period, now), ...(streamId ? [streamId] : [])],
  );
  const streams = rows.map((row) => {
    const startedAt = row.started_at && new Date(row.started_at);
    const endedAt = row.ended_at && new Date(row.ended_at);
    return {
      ...row,
      startedAt,
      endedAt,
      currentViewers: row.status === "live" ? simulatedViewerCount({ id: row.id, startedAt }, now) : row.viewer_count,
    };
  });
  const byPlatform: Record<string, number> = {};
  let viewers = 0;
  let minutes = 0;
  let liveNow = 0;
  for (const stream of streams) {
    viewers += stream.currentViewers;
    if (stream.startedAt && stream.endedAt) minutes += billedMinutes(stream.startedAt, stream.endedAt);
    if (stream.status === "live") liveNow += 1;
    const platform = stream.platform || "unknown";
    byPlatform[platform] = (byPlatform[platform] ?? 0) + 1;
  }
  return JSON.stringify({
    period,
    brand_id: brandId,
    total_streams: streams.length,
    total_viewers: viewers,
    total_minutes: minutes,
    live_now: liveNow,
    avg_viewers_per_stream: streams.length === 0 ? 0 : Math.round((viewers / streams.length) * 100) / 100,
    by_platform: byPlatform,
    streams: streams.map((stream) => ({
      id: stream.id,
      status: stream.status,
      viewer_count: stream.currentViewers,
      started_at: stream.startedAt?.toISOString() ?? null,
      ended_at: stream.endedAt?.toISOString() ?? null,
      platform: stream.platform || "unknown",
      vertical: stream.vertical,
    })),
  });
}

describe.each(availableEngines())(
  "GET /analytics summed in the database and written as it is read (%s)",
  (engine: Engine) => {
    let server: TestServer;
    let brandId: string;
    let key: string;
    let streamId: string;
    beforeAll(async () => {
      server = await startTestServer({ engine });
      ({ brandId, key } = await server.tenant({ max_active_streams: 20 }));
      // More than one batch of the list (ANALYTICS_BATCH) over the month, then streams of today in every state.
      await seedStreams(server.db, { brandId, count: 4_500, now: server.clock(), creatorId: CREATOR_ID });
      await seedStreams(server.db, { brandId, mode: "live", count: 50, now: server.clock(), creatorId: CREATOR_ID });
      await server.db.query(
        `INSERT INTO streams (id, brand_id, mode, status, creator_id, product_name, platform, vertical, room_name, viewer_count, created_at, started_at, ended_at)
       VALUES ($1, $2, 'test', 'ended', $3, 'No platform recorded', '', 'live-commerce', 'room_u', 12, $4, $4, $5)`,
        [
          randomUUID(),
          brandId,
          CREATOR_ID,
          new Date(server.clock().getTime() - 3_600_000),
          new Date(server.clock().getTime() - 3_000_000 + 1_234),
        ],
      );
      // Free text from another system: commas, quotes, a line break.
      await server.db.query(
        `INSERT INTO streams (id, brand_id, mode, status, creator_id, product_name, platform, vertical, room_name, viewer_count, created_at, started_at, ended_at)
       VALUES ($1, $2, 'test', 'error', $3, 'Odd platform', $4, 'igaming', 'room_o', 3, $5, $5, $6)`,
        [
          randomUUID(),
          brandId,
          CREATOR_ID,
          'web, "beta"\nedition',
          new Date(server.clock().getTime() - 7_200_000),
          new Date(server.clock().getTime() - 7_100_000),
        ],
      );
      for (const platform of ["tiktok", "youtube", "twitch"]) {
        streamId = (await server.call("POST", "/api/v1/streams", { key, body: streamBody({ platform }) })).body
          .stream_id;
        server.clock.advance(61_500);
      }
      await server.call("DELETE", `/api/v1/streams/${streamId}`, { key });
      await server.call("POST", "/api/v1/streams", { key, body: streamBody({ product_name: "sim:launch-failed" }) });
      await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody({ product_name: "sim:fails-live", platform: "kick" }),
      });
      server.clock.advance(7 * 60_000);
    });
    afterAll(() => server.close());

    it.each(["24h", "7d", "30d"] as const)("answers the same bytes as before for period=%s", async (period) => {
      const response = await server.call("GET", `/api/v1/analytics?period=${period}`, { key });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(response.text).toBe(await analyticsAsBefore(server, brandId, "test", period, null));
      expect(response.body.streams.length).toBe(response.body.total_streams);
    });

    it("answers the same bytes as before for one stream, an unknown stream and a brand without streams", async () => {
      const one = await server.call("GET", `/api/v1/analytics?stream_id=${streamId}`, { key });
      expect(one.text).toBe(await analyticsAsBefore(server, brandId, "test", "7d", streamId));
      expect(one.body.total_streams).toBe(1);
      const unknown = randomUUID();
      expect((await server.call("GET", `/api/v1/analytics?stream_id=${unknown}`, { key })).text).toBe(
        await analyticsAsBefore(server, brandId, "test", "7d", unknown),
      );
      const other = await server.tenant();
      expect((await server.call("GET", "/api/v1/analytics", { key: other.key })).text).toBe(
        await analyticsAsBefore(server, other.brandId, "test", "7d", null),
      );
    });

    it("never sends a stream the contract does not allow: 500 before the first byte, a cut connection after it", async () => {
      const early = await server.tenant();
      const badRow = (brand: string, at: Date) =>
        server.db.query(
          `INSERT INTO streams (id, brand_id, mode, status, creator_id, product_name, platform, vertical, room_name, created_at)
         VALUES ($1, $2, 'test', 'ended', $3, 'Written by another system', 'youtube', 'retail', 'room_r', $4)`,
          [randomUUID(), brand, CREATOR_ID, at],
        );
      await badRow(early.brandId, new Date(server.clock().getTime() - 60_000));
      const refused = await server.call("GET", "/api/v1/analytics", { key: early.key });
      // Not a database failure, and no retry mends it: 500 internal_error, never "safe to retry".
      expect(refused.status).toBe(500);
      expect(refused.body.error.code).toBe("internal_error");

      const late = await server.tenant();
      await badRow(late.brandId, new Date(server.clock().getTime() - 29 * 86_400_000 - 3_600_000));
      await seedStreams(server.db, { brandId: late.brandId, count: 2_500, now: server.clock(), creatorId: CREATOR_ID });
      await expect(server.call("GET", "/api/v1/analytics?period=30d", { key: late.key })).rejects.toThrow();
    });
  },
);
