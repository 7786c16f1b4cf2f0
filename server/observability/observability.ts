import type { DestinationStream } from "pino";
import type { AttemptReport } from "../services/delivery.ts";
import { DatabaseError } from "../store/database.ts";
import { createLogger, type Logger, type LogLevel } from "./logger.ts";
import { createMetrics, type Metrics } from "./metrics.ts";
import { databaseOutage, type DatabaseOutage } from "./outage.ts";
import { type WorkerRegistry, workerRegistry } from "./readiness.ts";

/** The logger, the metrics and the background jobs' state, made once per process (serve.ts) and shared by the app and the jobs. */
export interface Observability {
  logger: Logger;
  /** Only when METRICS_TOKEN is set: nothing is counted that no one can read. */
  metrics: Metrics | undefined;
  workers: WorkerRegistry;
  outage: DatabaseOutage;
}

export function createObservability({
  logLevel = "info",
  metrics = false,
  destination,
  logger = createLogger({ level: logLevel, ...(destination ? { destination } : {}) }),
  now = Date.now,
}: {
  logLevel?: LogLevel;
  metrics?: boolean;
  /** Where the log lines go (stdout by default); tests read them from here. */
  destination?: DestinationStream;
  logger?: Logger;
  /** The outage messages' clock. */
  now?: () => number;
} = {}): Observability {
  return {
    logger,
    metrics: metrics ? createMetrics() : undefined,
    workers: workerRegistry(),
    outage: databaseOutage({ logger, now }),
  };
}

/**
 * The lifecycle sweep as the server runs it: timed, logged when it moved streams, and a sign
 * that the database answers again (it runs every tick, so it ends an outage promptly).
 */
export function observedSweep(
  { logger, metrics, outage }: Observability,
  sweep: () => Promise<number>,
): () => Promise<number> {
  return async function sweepObserved() {
    const startedAt = performance.now();
    const moved = await sweep();
    metrics?.sweepDuration.observe((performance.now() - startedAt) / 1000);
    outage.recovered();
    if (moved > 0) logger.info({ moved }, "lifecycle sweep moved streams");
    return moved;
  };
}

/**
 * What a background job does with a failure: a database failure goes to the outage (one line
 * when it starts, reminders, one when it ends); anything else is a fault of ours, logged each time.
 */
export function backgroundFailure({ logger, outage }: Observability, source: string): (error: unknown) => void {
  return function reportFailure(error) {
    if (error instanceof DatabaseError) outage.failed(error, source);
    else logger.error({ source, error }, `${source} failed`);
  };
}

/** Counts every webhook attempt and logs each failed one: ids, attempt, status or error, what comes next. */
export function observeAttempts({ logger, metrics }: Observability): (report: AttemptReport) => void {
  return function observeAttempt(report) {
    metrics?.webhookAttempts.inc({ outcome: report.ok ? "succeeded" : "failed" });
    if (report.ok) return;
    logger.warn(
      {
        delivery_id: report.deliveryId,
        webhook_id: report.webhookId,
        event_id: report.eventId,
        attempt: report.attempt,
        ...(report.responseStatus !== null ? { response_status: report.responseStatus } : {}),
        ...(report.error !== null ? { error: report.error } : {}),
        next_attempt_at: report.nextAttemptAt?.toISOString() ?? null,
      },
      report.nextAttemptAt ? "webhook attempt failed; will retry" : "webhook attempt failed; no more attempts",
    );
  };
}
