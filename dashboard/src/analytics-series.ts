import type { Schemas } from "./api.ts";

type Analytics = Schemas["Analytics"];

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const PERIOD_MS: Record<Analytics["period"], number> = { "24h": DAY, "7d": 7 * DAY, "30d": 30 * DAY };

export interface Series {
  /** Start of each bucket, in seconds since the epoch (uPlot's x values). */
  starts: number[];
  /** Hours for the 24-hour period, UTC days otherwise. */
  unit: "hour" | "day";
  streams: number[];
  minutes: number[];
  viewers: number[];
}

/**
 * A stream's minutes as the server counts them (and bills them): whole seconds between start
 * and end, rounded up to minutes; none until it has both.
 */
export function streamMinutes(stream: Schemas["AnalyticsStream"]): number {
  if (!stream.started_at || !stream.ended_at) return 0;
  const ms = Math.max(0, Date.parse(stream.ended_at) - Date.parse(stream.started_at));
  return Math.floor((Math.floor(ms / 1000) + 59) / 60);
}

/**
 * The period's streams in buckets (per hour for 24h, per UTC day otherwise) by when they started;
 * one not started yet counts at `now`. Every stream of the answer lands in exactly one bucket,
 * so the sums equal the answer's totals.
 */
export function bucketAnalytics(analytics: Analytics, now: Date): Series {
  const unit = analytics.period === "24h" ? "hour" : "day";
  const size = unit === "hour" ? HOUR : DAY;
  const first = Math.floor((now.getTime() - PERIOD_MS[analytics.period]) / size) * size;
  const count = Math.floor(now.getTime() / size) - first / size + 1;
  const series: Series = { starts: [], unit, streams: [], minutes: [], viewers: [] };
  for (let i = 0; i < count; i++) {
    series.starts.push((first + i * size) / 1000);
    series.streams.push(0);
    series.minutes.push(0);
    series.viewers.push(0);
  }
  for (const stream of analytics.streams) {
    const at = Date.parse(stream.started_at ?? stream.ended_at ?? now.toISOString());
    const index = Math.min(count - 1, Math.max(0, Math.floor((at - first) / size)));
    series.streams[index]! += 1;
    series.minutes[index]! += streamMinutes(stream);
    series.viewers[index]! += stream.viewer_count;
  }
  return series;
}

export function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
