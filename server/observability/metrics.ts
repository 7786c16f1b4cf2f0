import { createRequire } from "node:module";
import type { Counter, Histogram, Registry } from "prom-client";
import type { Clock } from "../services/context.ts";
import type { PoolStats, Queryable } from "../store/database.ts";
import { countStreamsByStatus, type DeliveryBacklog, deliveryBacklog } from "../store/observability.ts";
import { STREAM_STATUSES } from "../domain/types.ts";
import { droppedLogLines } from "./logger.ts";

/**
 * prom-client, loaded when metrics are first made: a server without METRICS_TOKEN makes none and
 * does not load it (docs/performance.md, Start-up). It is CommonJS, so `require` loads it at once.
 */
function promClient(): typeof import("prom-client") {
  return createRequire(import.meta.url)("prom-client") as typeof import("prom-client");
}

/** A scrape waits this long at most for the database gauges; past it they are left out. */
const COLLECT_TIMEOUT_MS = 2_000;

/** Where the gauges read on each scrape come from: set by the app (see `watch`). */
export interface MetricsSource {
  db: Queryable;
  clock: Clock;
  pool(): PoolStats;
}

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<"operation" | "status">;
  httpDuration: Histogram<"operation">;
  rateLimited: Counter;
  webhookAttempts: Counter<"outcome">;
  sweepDuration: Histogram;
  /** Request log entries written, and dropped by reason (observability/request-log.ts). */
  requestLogWritten: Counter;
  requestLogDropped: Counter<"reason">;
  /** Points the scrape-time gauges at a database; until then they report nothing. */
  watch(source: MetricsSource): void;
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The server's Prometheus metrics, in their own registry (never prom-client's global one, so two
 * apps in one process, as in tests, do not share counts). Labels take bounded values only: an
 * operationId of the contract (or `unknown`, `docs`, `healthz`, `readyz`, `metrics`), an HTTP
 * status, an attempt outcome, a stream status. The database gauges are read when scraped, each
 * with one query; if the database does not answer, that scrape leaves out `streams` and reports
 * the backlog gauges as NaN (never a reassuring 0) rather than failing, so /metrics works while
 * the database is down.
 */
export function createMetrics({ defaultMetrics = true }: { defaultMetrics?: boolean } = {}): Metrics {
  const { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } = promClient();
  const registry = new Registry();
  if (defaultMetrics) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  let source: MetricsSource | undefined;

  // Both backlog gauges come from one query; the scrape collects them side by side.
  let backlog: Promise<DeliveryBacklog> | null = null;
  const readBacklog = (from: MetricsSource): Promise<DeliveryBacklog> => {
    backlog ??= withTimeout(deliveryBacklog(from.db, from.clock()), COLLECT_TIMEOUT_MS).finally(() => {
      backlog = null;
    });
    return backlog;
  };

  const metrics: Metrics = {
    registry,
    httpRequests: new Counter({
      name: "http_requests_total",
      help: "HTTP requests answered, by contract operation and status.",
      labelNames: ["operation", "status"],
      registers,
    }),
    httpDuration: new Histogram({
      name: "http_request_duration_seconds",
      help: "Time from a request's arrival to its response's last byte, by contract operation.",
      labelNames: ["operation"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    rateLimited: new Counter({
      name: "rate_limited_total",
      help: "Requests refused with 429 rate_limited (per brand, per client address, per dashboard session).",
      registers,
    }),
    webhookAttempts: new Counter({
      name: "webhook_attempts_total",
      help: "Webhook delivery attempts, by outcome (succeeded: 2xx; failed: anything else).",
      labelNames: ["outcome"],
      registers,
    }),
    sweepDuration: new Histogram({
      name: "lifecycle_sweep_duration_seconds",
      help: "Time one lifecycle sweep took (due streams moved to their next status).",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    requestLogWritten: new Counter({
      name: "request_log_written_total",
      help: "Request log entries written to the database.",
      registers,
    }),
    requestLogDropped: new Counter({
      name: "request_log_dropped_total",
      help: "Request log entries dropped, by reason: queue_full (the writer's queue was full), brand_share (one brand held its share of the queue), write_failed (the database refused or did not answer the batch).",
      labelNames: ["reason"],
      registers,
    }),
    watch(next) {
      source = next;
    },
  };

  // Shown at 0 from the start, so an alert on them has a series before the first drop.
  for (const reason of ["queue_full", "brand_share", "write_failed"]) metrics.requestLogDropped.inc({ reason }, 0);

  // Registered before the gauges that query, so a scrape reads the pool before its own queries take connections.
  const poolGauge = (name: string, help: string, pick: (stats: PoolStats) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.reset();
        if (source) this.set(pick(source.pool()));
      },
    });
  poolGauge("db_pool_total", "Database connections open (PGlite: 1).", (stats) => stats.total);
  poolGauge(
    "db_pool_idle",
    "Database connections idle (PGlite: 1 when no statement runs, else 0).",
    (stats) => stats.idle,
  );
  poolGauge(
    "db_pool_waiting",
    "Queries waiting for a connection (PGlite: statements queued behind the running one).",
    (stats) => stats.waiting,
  );

  new Gauge({
    name: "streams",
    help: "Streams by status, across brands and modes (read from the database when scraped).",
    labelNames: ["status"],
    registers,
    async collect() {
      this.reset();
      if (!source) return;
      const counts = await withTimeout(countStreamsByStatus(source.db), COLLECT_TIMEOUT_MS).catch(() => null);
      if (!counts) return;
      for (const status of STREAM_STATUSES) this.set({ status }, counts.get(status) ?? 0);
    },
  });
  new Gauge({
    name: "webhook_delivery_backlog",
    help: "Webhook deliveries still pending: due, in flight or waiting for a retry (read when scraped).",
    registers,
    async collect() {
      this.reset();
      if (!source) return;
      const read = await readBacklog(source).catch(() => null);
      this.set(read ? read.pending : Number.NaN);
    },
  });
  new Gauge({
    name: "webhook_oldest_due_delivery_age_seconds",
    help: "How long the longest-due pending delivery has been due; 0 when none is due (read when scraped).",
    registers,
    async collect() {
      this.reset();
      if (!source) return;
      const from = source;
      const read = await readBacklog(from).catch(() => null);
      if (!read) this.set(Number.NaN);
      else this.set(read.oldestDueAt ? Math.max(0, (from.clock().getTime() - read.oldestDueAt.getTime()) / 1000) : 0);
    },
  });
  new Counter({
    name: "log_lines_dropped_total",
    help: "Log lines dropped because the reader of stdout fell 16 MB behind (the logger counts them).",
    registers,
    collect() {
      this.reset();
      this.inc(droppedLogLines());
    },
  });
  return metrics;
}
