import type { Logger } from "./logger.ts";

export interface DatabaseOutage {
  /** A background job could not reach the database. */
  failed(error: unknown, source: string): void;
  /** A background job reached the database. */
  recovered(): void;
  readonly down: boolean;
}

function causeOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause =
    error.cause instanceof Error && error.cause.message !== error.message ? ` (${error.cause.message})` : "";
  return `${error.message}${cause}`;
}

/**
 * Turns the background jobs' database failures (the sweeper and the delivery worker fail every
 * tick while the database is away) into three kinds of line: one error when the outage starts,
 * with its cause; a reminder at most every `reminderMs` while it lasts; one line when it ends,
 * with its duration. `now` is injectable so tests drive it without waiting.
 */
export function databaseOutage({
  logger,
  now = Date.now,
  reminderMs = 30_000,
}: {
  logger: Logger;
  now?: () => number;
  reminderMs?: number;
}): DatabaseOutage {
  let since: number | null = null;
  let remindedAt = 0;
  let failures = 0;
  return {
    failed(error, source) {
      const at = now();
      failures += 1;
      if (since === null) {
        since = remindedAt = at;
        logger.error({ source, cause: causeOf(error) }, "database unreachable");
        return;
      }
      if (at - remindedAt >= reminderMs) {
        remindedAt = at;
        logger.warn(
          { source, cause: causeOf(error), down_for_s: Math.round((at - since) / 1000), failures },
          "database still unreachable",
        );
      }
    },
    recovered() {
      if (since === null) return;
      logger.info({ outage_s: Math.round((now() - since) / 100) / 10, failures }, "database reachable again");
      since = null;
      failures = 0;
    },
    get down() {
      return since !== null;
    },
  };
}
