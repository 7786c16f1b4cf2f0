import { durationMinutes } from "../../generated/limits.ts";
import type { EventType, Stream, StreamStatus } from "./types.ts";

/** Streams without a duration (test keys may omit it) still end after the longest the contract allows (8 hours). */
export const MAX_DURATION_MINUTES = durationMinutes.max;

export interface LifecycleTimings {
  simAgentJoinMs: number;
}

export type Transition = { to: Exclude<StreamStatus, "preparing">; at: Date };

/** When a live stream ends by itself: `duration_minutes` after it went live. */
export function scheduledEnd(stream: Pick<Stream, "startedAt" | "durationMinutes">): Date | null {
  if (!stream.startedAt) return null;
  const minutes = stream.durationMinutes ?? MAX_DURATION_MINUTES;
  return new Date(stream.startedAt.getTime() + minutes * 60_000);
}

/** The earliest moment something is scheduled to happen to the stream, or null. */
export function nextDueAt(
  stream: Pick<Stream, "status" | "joinAt" | "timeoutAt" | "failAt" | "startedAt" | "durationMinutes">,
): Date | null {
  const candidates =
    stream.status === "preparing"
      ? [stream.joinAt, stream.timeoutAt]
      : stream.status === "live"
        ? [stream.failAt, scheduledEnd(stream)]
        : [];
  const times = candidates.filter((time): time is Date => time !== null).map((time) => time.getTime());
  return times.length ? new Date(Math.min(...times)) : null;
}

/** The transition that is due at `now`, if any; the earliest scheduled one wins. */
export function dueTransition(stream: Stream, now: Date): Transition | null {
  const due = (time: Date | null): time is Date => time !== null && time.getTime() <= now.getTime();
  if (stream.status === "preparing") {
    const joined = due(stream.joinAt) && (!stream.timeoutAt || stream.joinAt.getTime() < stream.timeoutAt.getTime());
    if (joined) return { to: "live", at: stream.joinAt! };
    if (due(stream.timeoutAt)) return { to: "error", at: stream.timeoutAt };
    return null;
  }
  if (stream.status === "live") {
    const end = scheduledEnd(stream);
    if (due(stream.failAt) && (!end || stream.failAt.getTime() < end.getTime()))
      return { to: "error", at: stream.failAt };
    if (due(end)) return { to: "ended", at: end };
  }
  return null;
}

/** The stream after a transition, with the fields the spec populates per status. */
export function applyTransition(stream: Stream, transition: Transition, timings: LifecycleTimings): Stream {
  if (transition.to === "live") {
    return {
      ...stream,
      status: "live",
      startedAt: transition.at,
      failAt:
        stream.simTrigger === "sim:fails-live" ? new Date(transition.at.getTime() + timings.simAgentJoinMs) : null,
    };
  }
  return { ...stream, status: transition.to, endedAt: transition.at };
}

export function eventTypeFor(status: StreamStatus): EventType | null {
  switch (status) {
    case "live":
      return "stream.started";
    case "ended":
      return "stream.ended";
    case "error":
      return "stream.error";
    default:
      return null;
  }
}

/**
 * Simulated audience: a deterministic curve per stream (seeded by its id) that grows over the
 * first minutes live, so sandbox users see a live-updating count without randomness in tests.
 */
export function simulatedViewerCount(stream: Pick<Stream, "id" | "startedAt">, at: Date): number {
  if (!stream.startedAt) return 0;
  // The first six hex digits of the UUID (its first group has eight, so no dash is among them).
  const seed = parseInt(stream.id.slice(0, 6), 16) || 1;
  const peak = 40 + (seed % 460);
  const minutes = Math.max(0, (at.getTime() - stream.startedAt.getTime()) / 60_000);
  return Math.round(peak * (1 - Math.exp(-minutes / 4)));
}
