import { settle, streamedSeconds } from "./billing.ts";
import type { EventType, Stream, StreamStatus } from "./types.ts";

/** One moment of a stream's timeline. */
export type TimelineEntry =
  | { kind: "status"; at: Date; status: StreamStatus }
  | {
      kind: "billing";
      at: Date;
      action: "hold" | "charge" | "release";
      amountCents: number;
      /** Planned minutes for a hold, billed minutes for a charge; null for a release. */
      minutes: number | null;
    }
  | { kind: "event"; at: Date; eventId: string; eventType: EventType };

/** How the stream is billed, as the server bills it (billing.ts): settled, or what ending it now would bill. */
export interface StreamBilling {
  billed: boolean;
  pricePerMinuteCents: number;
  holdCents: number;
  billedMinutes: number | null;
  chargedCents: number | null;
  settled: boolean;
}

export interface StreamTimeline {
  /** Whole seconds streamed (to now while live); null when it never went live. */
  durationSeconds: number | null;
  billing: StreamBilling;
  /** Oldest first; at one instant, the status change, then the billing, then the event. */
  entries: TimelineEntry[];
}

const left = (stream: Pick<Stream, "status">) => stream.status === "ended" || stream.status === "error";

/**
 * The statuses the stream went through, from its record: created in `preparing` (live mode, and
 * a test stream marked `sim:never-joins`) or already `live`, or `error` when its launch failed
 * (test mode, spec §3); `live` at `started_at`; `ended` or `error` at `ended_at`.
 */
function statusChanges(stream: Stream): TimelineEntry[] {
  const created: StreamStatus =
    stream.mode === "live" || stream.simTrigger === "sim:never-joins"
      ? "preparing"
      : stream.startedAt
        ? "live"
        : "error";
  const changes: TimelineEntry[] = [{ kind: "status", at: stream.createdAt, status: created }];
  if (stream.mode === "live" && stream.startedAt)
    changes.push({ kind: "status", at: stream.startedAt, status: "live" });
  if (stream.endedAt && left(stream) && created !== stream.status)
    changes.push({ kind: "status", at: stream.endedAt, status: stream.status });
  return changes;
}

/**
 * The stream's billing (live mode only, spec §1 rule 2): settled when it left `live`, with what
 * the settlement recorded; while live, what settling it `now` would charge.
 */
export function streamBilling(stream: Stream, now: Date): StreamBilling {
  const billing = {
    billed: stream.mode === "live",
    pricePerMinuteCents: stream.pricePerMinuteCents,
    holdCents: stream.holdCents,
    billedMinutes: null,
    chargedCents: null,
    settled: false,
  };
  if (stream.mode !== "live") return billing;
  if (left(stream)) {
    const settled = settle(stream);
    return {
      ...billing,
      settled: true,
      ...(stream.startedAt
        ? {
            billedMinutes: stream.billedMinutes ?? settled.billedMinutes,
            chargedCents: stream.chargedCents ?? settled.chargedCents,
          }
        : {}),
    };
  }
  if (!stream.startedAt) return billing;
  const sofar = settle({ ...stream, endedAt: now });
  return { ...billing, billedMinutes: sofar.billedMinutes, chargedCents: sofar.chargedCents };
}

/** The money moved: the hold at creation; when it left `live`, the charge (if it was ever live) and the hold's release. */
function billingMoves(stream: Stream, billing: StreamBilling): TimelineEntry[] {
  if (!billing.billed) return [];
  const moves: TimelineEntry[] = [
    {
      kind: "billing",
      at: stream.createdAt,
      action: "hold",
      amountCents: stream.holdCents,
      minutes: stream.durationMinutes,
    },
  ];
  if (billing.settled && stream.endedAt) {
    if (billing.chargedCents !== null)
      moves.push({
        kind: "billing",
        at: stream.endedAt,
        action: "charge",
        amountCents: billing.chargedCents,
        minutes: billing.billedMinutes,
      });
    moves.push({
      kind: "billing",
      at: stream.endedAt,
      action: "release",
      amountCents: stream.holdCents,
      minutes: null,
    });
  }
  return moves;
}

const ORDER: Record<TimelineEntry["kind"], number> = { status: 0, billing: 1, event: 2 };

/**
 * What happened to the stream, oldest first: its status changes, its billing and its webhook
 * events; at most `maxEntries` (the contract's bound: a stream has at most two events).
 */
export function streamTimeline(
  stream: Stream,
  events: ReadonlyArray<{ id: string; type: EventType; createdAt: Date }>,
  now: Date,
  maxEntries: number,
): StreamTimeline {
  const billing = streamBilling(stream, now);
  const entries: TimelineEntry[] = [
    ...statusChanges(stream),
    ...billingMoves(stream, billing),
    ...events.map((event) => ({
      kind: "event" as const,
      at: event.createdAt,
      eventId: event.id,
      eventType: event.type,
    })),
  ].sort((a, b) => a.at.getTime() - b.at.getTime() || ORDER[a.kind] - ORDER[b.kind]);
  return {
    durationSeconds: stream.startedAt ? streamedSeconds(stream.startedAt, stream.endedAt ?? now) : null,
    billing,
    entries: entries.slice(0, maxEntries),
  };
}
