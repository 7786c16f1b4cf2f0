import type { Queryable } from "../store/database.ts";
import { hasLatestMigration } from "../store/observability.ts";

/** The background jobs a ready server runs. */
export const WORKERS = ["lifecycle_sweeper", "delivery_worker"] as const;
export type WorkerName = (typeof WORKERS)[number];

/** How long /readyz waits for the database's answer. */
export const READINESS_TIMEOUT_MS = 2_000;

/** Which background jobs run: a job counts from `track` until its `stop()` is called. */
export interface WorkerRegistry {
  track<T extends { stop(): Promise<void> }>(name: WorkerName, worker: T): T;
  running(name: WorkerName): boolean;
}

export function workerRegistry(): WorkerRegistry {
  const running = new Set<WorkerName>();
  return {
    track(name, worker) {
      running.add(name);
      const stop = worker.stop.bind(worker);
      return Object.assign(worker, {
        stop() {
          running.delete(name);
          return stop();
        },
      });
    },
    running: (name) => running.has(name),
  };
}

/** `ok`, or what is wrong; the names are what /readyz answers. */
export type CheckResult = "ok" | "unreachable" | "timeout" | "not_migrated" | "unknown" | "not_running";

export interface Readiness {
  ready: boolean;
  checks: Record<"database" | "migrations" | WorkerName, CheckResult>;
}

/**
 * The server is ready when the database answers a trivial query within `timeoutMs`, records the
 * newest migration this code knows, and the lifecycle sweeper and delivery worker run. One query
 * answers both database checks.
 */
export async function checkReadiness({
  db,
  workers,
  timeoutMs = READINESS_TIMEOUT_MS,
}: {
  db: Queryable;
  workers: WorkerRegistry;
  timeoutMs?: number;
}): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  const answer = await Promise.race([hasLatestMigration(db).catch(() => "unreachable" as const), timedOut]).finally(
    () => clearTimeout(timer),
  );
  const database: CheckResult = typeof answer === "boolean" ? "ok" : answer;
  const checks: Readiness["checks"] = {
    database,
    migrations: answer === true ? "ok" : answer === false ? "not_migrated" : "unknown",
    lifecycle_sweeper: workers.running("lifecycle_sweeper") ? "ok" : "not_running",
    delivery_worker: workers.running("delivery_worker") ? "ok" : "not_running",
  };
  return { ready: Object.values(checks).every((check) => check === "ok"), checks };
}
