import { describe, expect, it } from "vitest";
import type { Schemas } from "./api.ts";
import { bucketAnalytics, streamMinutes, sum } from "./analytics-series.ts";

type Stream = Schemas["AnalyticsStream"];

function stream(started: string | null, ended: string | null, viewers: number): Stream {
  return {
    id: crypto.randomUUID(),
    status: ended ? "ended" : started ? "live" : "preparing",
    viewer_count: viewers,
    started_at: started,
    ended_at: ended,
    platform: "youtube",
    vertical: "live-commerce",
  };
}

function analytics(period: Schemas["Analytics"]["period"], streams: Stream[]): Schemas["Analytics"] {
  return {
    period,
    brand_id: crypto.randomUUID(),
    total_streams: streams.length,
    total_viewers: 0,
    total_minutes: 0,
    live_now: 0,
    avg_viewers_per_stream: 0,
    by_platform: {},
    streams,
  };
}

describe("analytics charts' buckets", () => {
  it("rounds a stream's minutes up from whole seconds, as billing does", () => {
    expect(streamMinutes(stream("2026-11-20T10:00:00.000Z", "2026-11-20T10:01:00.999Z", 0))).toBe(1);
    expect(streamMinutes(stream("2026-11-20T10:00:00.000Z", "2026-11-20T10:01:01.000Z", 0))).toBe(2);
    expect(streamMinutes(stream("2026-11-20T10:00:00.000Z", null, 0))).toBe(0);
  });

  it("puts every stream of a 7-day period in one UTC day, so the sums equal the totals", () => {
    const now = new Date("2026-11-20T12:00:00.000Z");
    const streams = [
      stream("2026-11-13T12:30:00.000Z", "2026-11-13T13:00:00.000Z", 4),
      stream("2026-11-20T09:00:00.000Z", "2026-11-20T09:10:30.000Z", 7),
      stream("2026-11-20T11:00:00.000Z", null, 3),
      stream(null, null, 0),
    ];
    const series = bucketAnalytics(analytics("7d", streams), now);
    expect(series.unit).toBe("day");
    expect(series.starts).toHaveLength(8);
    expect(series.starts[0]).toBe(Date.parse("2026-11-13T00:00:00.000Z") / 1000);
    expect(series.streams).toEqual([1, 0, 0, 0, 0, 0, 0, 3]);
    expect(series.minutes).toEqual([30, 0, 0, 0, 0, 0, 0, 11]);
    expect([sum(series.streams), sum(series.minutes), sum(series.viewers)]).toEqual([4, 41, 14]);
  });

  it("uses hours for the 24-hour period", () => {
    const series = bucketAnalytics(
      analytics("24h", [stream("2026-11-20T11:59:00.000Z", null, 1)]),
      new Date("2026-11-20T12:00:00.000Z"),
    );
    expect(series.unit).toBe("hour");
    expect(series.starts).toHaveLength(25);
    expect(series.streams.at(-2)).toBe(1);
  });
});
