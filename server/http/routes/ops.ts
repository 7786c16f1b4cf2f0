import { type RequestHandler, Router } from "express";
import { ApiError } from "../../domain/errors.ts";
import type { Metrics } from "../../observability/metrics.ts";
import { checkReadiness, type WorkerRegistry } from "../../observability/readiness.ts";
import type { Queryable } from "../../store/database.ts";
import type { TokenChecker } from "../token-failures.ts";

export interface OpsDeps {
  db: Queryable;
  workers: WorkerRegistry;
  /** Served at /metrics only with both a registry and a token. */
  metrics: Metrics | undefined;
  metricsToken: string | undefined;
  /** Compares the token, slowing guesses per address. */
  checkToken: TokenChecker;
  /** Gives the response its Request-Id (these routes answer before the contract edge). */
  requestId: RequestHandler;
  readinessTimeoutMs?: number;
}

/**
 * The operations endpoints, outside /api/v1 and outside the contract (not in openapi.yaml, so not
 * in the public docs, the SDK or the mock): mounted before the contract edge, so the validator
 * never sees them, and touching nothing the API needs, so they answer while the database is down.
 * - GET /healthz: 200 while the process runs.
 * - GET /readyz: 200 when the database answers, is migrated and the background jobs run; 503
 *   naming the failing check otherwise.
 * - GET /metrics: Prometheus text, only when METRICS_TOKEN is set (404 otherwise, as if it did
 *   not exist) and only for `Authorization: Bearer <METRICS_TOKEN>` (401 otherwise; 429 while an
 *   address that failed too often waits).
 */
export function opsRoutes({
  db,
  workers,
  metrics,
  metricsToken,
  checkToken,
  requestId,
  readinessTimeoutMs,
}: OpsDeps): Router {
  const router = Router({ caseSensitive: true, strict: true });
  router.use(["/healthz", "/readyz", "/metrics"], requestId, (_req, res, next) => {
    res.set("Cache-Control", "no-store");
    next();
  });

  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });

  router.get("/readyz", async (_req, res) => {
    const { ready, checks } = await checkReadiness({
      db,
      workers,
      ...(readinessTimeoutMs ? { timeoutMs: readinessTimeoutMs } : {}),
    });
    res.status(ready ? 200 : 503).json({ status: ready ? "ready" : "not_ready", checks });
  });

  router.get("/metrics", async (req, res) => {
    if (!metrics || !metricsToken) throw new ApiError("not_found", "No such endpoint.");
    checkToken(req, metricsToken, "Missing or invalid metrics token. Send Authorization: Bearer <METRICS_TOKEN>.");
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  return router;
}
