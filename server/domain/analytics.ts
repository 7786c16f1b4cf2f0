import type { components } from "../../generated/api.ts";

/** The analytics periods the contract accepts. */
export type Period = components["schemas"]["Analytics"]["period"];

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

/** One platform's streams of the period, summed by the store. */
export interface PlatformShare {
  platform: string;
  streams: number;
  /** Viewers of the streams not live (their final counts). */
  settledViewers: number;
  /** Minutes of completed streams, each rounded up as billing rounds it. */
  minutes: number;
  live: number;
}

/**
 * The period's totals from its per-platform shares (in the order each platform first appears in
 * the list) and the current viewer counts of its live streams. Minutes count only completed
 * streams; a live stream counts once it ends.
 */
export function summarise(shares: readonly PlatformShare[], liveViewers: readonly number[]): AnalyticsSummary {
  const byPlatform: Record<string, number> = {};
  let streams = 0;
  let viewers = liveViewers.reduce((sum, count) => sum + count, 0);
  let minutes = 0;
  let liveNow = 0;
  for (const share of shares) {
    streams += share.streams;
    viewers += share.settledViewers;
    minutes += share.minutes;
    liveNow += share.live;
    byPlatform[share.platform] = share.streams;
  }
  return {
    total_streams: streams,
    total_viewers: viewers,
    total_minutes: minutes,
    live_now: liveNow,
    avg_viewers_per_stream: streams === 0 ? 0 : Math.round((viewers / streams) * 100) / 100,
    by_platform: byPlatform,
  };
}
