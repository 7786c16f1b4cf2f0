/**
 * The webhook retry schedule (spec §6, Delivery and retries): a failed delivery is retried up to
 * five times, after 1 minute, 5 minutes, 30 minutes, 2 hours and 6 hours. So at most six
 * attempts in all, the first and one per delay (the contract's `attempt` maximum). Operators may
 * shorten the delays with WEBHOOK_RETRY_SCHEDULE_MS (config.ts), never add attempts.
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000];

/** Retries at most, whatever the configured schedule. */
export const MAX_RETRIES = RETRY_SCHEDULE_MS.length;

/** Attempt n (1-based) failed: how long until the next one, or null after the last. */
export function nextAttemptDelay(attempt: number, scheduleMs: readonly number[]): number | null {
  return scheduleMs[attempt - 1] ?? null;
}
