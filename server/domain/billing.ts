import { ApiError } from "./errors.ts";
import type { Brand, Stream } from "./types.ts";

/** The hold taken from the wallet at start: the projected cost of the whole duration. */
export function projectedCostCents(durationMinutes: number, pricePerMinuteCents: number): number {
  return durationMinutes * pricePerMinuteCents;
}

/** Plan minutes are checked before credits (DESIGN.md §5 check order). */
export function assertCanAfford(brand: Brand, holdCents: number): void {
  if (brand.minutesUsed >= brand.planMinutes) throw new ApiError("no_minutes");
  if (brand.creditsCents - brand.creditsHeldCents < holdCents) throw new ApiError("insufficient_credits");
}

/** Time streamed, in whole seconds (partial seconds are dropped): from `started_at`, never from creation. */
export function streamedSeconds(startedAt: Date, endedAt: Date): number {
  return Math.max(0, Math.floor((endedAt.getTime() - startedAt.getTime()) / 1000));
}

/**
 * Billed minutes of a stream that was live: its whole seconds streamed, rounded up to whole
 * minutes. Time in preparing is never billed because it starts at `started_at`.
 */
export function billedMinutes(startedAt: Date, endedAt: Date): number {
  return Math.ceil(streamedSeconds(startedAt, endedAt) / 60);
}

export interface Settlement {
  billedMinutes: number;
  chargedCents: number;
  /** The whole hold is released; the charge is taken from the balance. */
  releasedHoldCents: number;
}

/** What a live-mode stream costs when it leaves live, or 0 when it never went live. */
export function settle(
  stream: Pick<Stream, "startedAt" | "endedAt" | "holdCents" | "pricePerMinuteCents">,
): Settlement {
  if (!stream.startedAt || !stream.endedAt) {
    return { billedMinutes: 0, chargedCents: 0, releasedHoldCents: stream.holdCents };
  }
  const minutes = billedMinutes(stream.startedAt, stream.endedAt);
  // The stream ends by itself at its duration, so the charge never exceeds the hold.
  const charged = Math.min(minutes * stream.pricePerMinuteCents, stream.holdCents);
  return { billedMinutes: minutes, chargedCents: charged, releasedHoldCents: stream.holdCents };
}
