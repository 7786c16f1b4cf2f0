import { billedMinutes } from "./billing.ts";
import type { Stream } from "./types.ts";

export type Period = "24h" | "7d" | "30d";

const PERIOD_MS: Record<Period, number> = { "24h": 86_400_000, "7d": 7 * 86_400_000, "30d": 30 * 86_400_000 };

export function periodStart(period: Period, now: Date): Date {
  return new Date(now.getTime() - PERIOD_MS[period]);
}

export interface AnalyticsSummary {
  total_streams: number;
  total_viewers: number;
  total_minutes: number;
  live_now: number;
  avg_viewers_per_stream: number;
  by_platform: Record<string, number>;
}

/**
 * Aggregates streams created within the period. Minutes count only completed streams (both
 * started_at and ended_at), rounded as billing rounds them; a live stream counts once it ends.
 */
export function summarise(streams: ReadonlyArray<Stream & { currentViewers: number }>): AnalyticsSummary {
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
  return {
    total_streams: streams.length,
    total_viewers: viewers,
    total_minutes: minutes,
    live_now: liveNow,
    avg_viewers_per_stream: streams.length === 0 ? 0 : Math.round((viewers / streams.length) * 100) / 100,
    by_platform: byPlatform,
  };
}
