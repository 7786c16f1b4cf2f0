import type { Queryable } from "../store/database.ts";
import { authenticationRuns, hasLatestMigration } from "../store/observability.ts";

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
  checks: Record<"database" | "migrations" | "authentication" | WorkerName, CheckResult>;
}

/**
 * The server is ready when the database answers within `timeoutMs`, records the newest migration
 * this code knows, runs the statements that authenticate requests (a lock that would fail every
 * authenticated request fails this too), and the lifecycle sweeper and delivery worker run.
 */
export async function checkReadiness({
  db,
  workers,
  timeoutMs = READINESS_TIMEOUT_MS,
  now = new Date(),
}: {
  db: Queryable;
  workers: WorkerRegistry;
  timeoutMs?: number;
  now?: Date;
}): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  // What the probe has learnt when the time is up: the migrations may have answered, authentication not.
  let learnt: boolean | "unreachable" | undefined;
  const probe = async () => {
    const migrated = await hasLatestMigration(db).catch(() => "unreachable" as const);
    learnt = migrated;
    if (migrated === "unreachable") return { migrated, authentication: "unknown" as const };
    const authentication = await authenticationRuns(db, now).then(
      () => "ok" as const,
      () => "unreachable" as const,
    );
    return { migrated, authentication };
  };
  const answer = await Promise.race([probe(), timedOut]).finally(() => clearTimeout(timer));
  const migrated = answer === "timeout" ? (learnt ?? "timeout") : answer.migrated;
  const database: CheckResult = typeof migrated === "boolean" ? "ok" : migrated;
  const authentication: CheckResult =
    answer === "timeout" ? (learnt === undefined ? "unknown" : "timeout") : answer.authentication;
  const checks: Readiness["checks"] = {
    database,
    migrations: migrated === true ? "ok" : migrated === false ? "not_migrated" : "unknown",
    authentication,
    lifecycle_sweeper: workers.running("lifecycle_sweeper") ? "ok" : "not_running",
    delivery_worker: workers.running("delivery_worker") ? "ok" : "not_running",
  };
  return { ready: Object.values(checks).every((check) => check === "ok"), checks };
}
