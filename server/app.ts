import { fileURLToPath } from "node:url";
import express, { type Express, type Request, type RequestHandler } from "express";
import type { Config } from "./config.ts";
import type { Contract } from "../contract/contract.ts";
import { API_BASE } from "../contract/operations.ts";
import { errorHandler, noSuchEndpoint } from "./http/error-handler.ts";
import { apiGuard } from "./http/guard.ts";
import { FixedWindowCounter } from "./domain/rate-window.ts";
import { dispatchOperation } from "./http/dispatch.ts";
import { clientAddress } from "./http/client-address.ts";
import { dashboardGuard } from "./http/dashboard-session.ts";
import { DEFAULT_DASHBOARD_RATE_LIMITS, dashboardLimiter } from "./http/dashboard-limit.ts";
import { requestWindowsOf } from "./store/request-windows.ts";
import { analyticsHandler } from "./http/routes/analytics.ts";
import { dashboardHandlers } from "./http/routes/dashboard/index.ts";
import { operatorGuard, operatorHandlers } from "./http/routes/operator.ts";
import { publicHandlers } from "./http/routes/public.ts";
import { streamHandlers } from "./http/routes/streams.ts";
import { webhookHandlers } from "./http/routes/webhooks.ts";
import { listenHandlers } from "./http/routes/listen.ts";
import { deliveryHandlers } from "./http/routes/deliveries.ts";
import { testClockHandlers } from "./http/routes/test-clock.ts";
import { assignRequestId, mountContractEdge } from "./http/pipeline.ts";
import { THIS_SERVER } from "./http/served-docs.ts";
import { opsRoutes } from "./http/routes/ops.ts";
import { providerWebhookPath, providerWebhookRoutes } from "./http/routes/provider-webhook.ts";
import { createObservability, type Observability } from "./observability/observability.ts";
import { OPS_PATHS, observeRequests } from "./http/observe-requests.ts";
import { captureAnswers, type RequestLogWriter } from "./observability/request-log.ts";
import { requestLogHandlers } from "./http/routes/requests.ts";
import type { AgentProvider } from "./providers/agent-provider.ts";
import { simulatedAgentProvider } from "./providers/simulated-agent.ts";
import type { Clock, ServiceContext } from "./services/context.ts";
import { keyUseRecorder } from "./services/key-use.ts";
import type { Database } from "./store/database.ts";
import { secretBox } from "./domain/secret-box.ts";
import { tokenChecker } from "./http/token-failures.ts";
import { type DatabaseBudget, withDatabaseBudget } from "./store/request-budget.ts";

/** The request's database time (PostgreSQL only), given on arrival, entered for what follows. */
function databaseBudget(db: Database): RequestHandler {
  const budgetMs = db.requestTimeBudgetMs;
  return function enterDatabaseBudget(_req, res, next) {
    if (budgetMs === undefined) return next();
    res.locals.databaseBudget ??= {
      leftMs: budgetMs,
      open: () => !res.writableFinished && !res.destroyed,
    } satisfies DatabaseBudget;
    withDatabaseBudget(res.locals.databaseBudget, next);
  };
}

export const DEFAULT_DOCS_DIR = fileURLToPath(new URL("../build/docs", import.meta.url));

export type AppConfig = Pick<
  Config,
  "adminToken" | "publicBaseUrl" | "preparingTimeoutMs" | "simAgentJoinMs" | "webhookAllowHosts"
> &
  Partial<
    Pick<
      Config,
      | "metricsToken"
      | "trustProxy"
      | "dashboardSession"
      | "dashboardRateLimit"
      | "totpEncryption"
      | "tokenFailuresBeforeWait"
    >
  >;

export const DEFAULT_DASHBOARD_DIR = fileURLToPath(new URL("../build/dashboard", import.meta.url));
const DEFAULT_DASHBOARD_SESSION = { idleMs: 12 * 60 * 60_000, absoluteMs: 7 * 24 * 60 * 60_000 };

export interface AppOptions {
  db: Database;
  /** openapi.yaml as loaded once at start-up (`await loadContract()`): its operations, limits and schemas. */
  contract: Contract;
  config: AppConfig;
  clock?: Clock;
  provider?: AgentProvider;
  docsDir?: string;
  /** The dashboard's built single-page app (npm run build), served at /dashboard. */
  dashboardDir?: string;
  /** The logger, metrics and background jobs' state (observability/); by default info-level logs on stdout, no metrics, no jobs. */
  observability?: Observability;
  /** The brands' request log (GET /requests); absent, nothing is recorded (REQUEST_LOG=off). */
  requestLog?: RequestLogWriter | undefined;
  /** What the served contract and docs call this deployment (default "This server"; the dynamic mock names itself). */
  servedAs?: string;
}

/**
 * The HTTP app: the request log and metrics, the operations endpoints (/healthz, /readyz,
 * /metrics), the contract edge (http/pipeline.ts: guard, body, validation against openapi.yaml,
 * in the documented check order), then the routes (endpoint rules), then the one error handler.
 * Every response is validated against the contract too.
 */
export function createApp({
  db,
  contract,
  config,
  clock = () => new Date(),
  provider,
  docsDir = DEFAULT_DOCS_DIR,
  dashboardDir = DEFAULT_DASHBOARD_DIR,
  observability = createObservability(),
  requestLog,
  servedAs = THIS_SERVER,
}: AppOptions): Express {
  const ctx: ServiceContext & { webhookAllowHosts: readonly string[] } = {
    db,
    clock,
    provider: provider ?? simulatedAgentProvider({ joinAfterMs: config.simAgentJoinMs }),
    preparingTimeoutMs: config.preparingTimeoutMs,
    simAgentJoinMs: config.simAgentJoinMs,
    webhookAllowHosts: config.webhookAllowHosts,
  };
  const { operations } = contract;

  const { logger, metrics, workers } = observability;
  if (config.metricsToken && !metrics)
    throw new Error(
      "createApp: config.metricsToken is set but observability has no metrics; make it with createObservability({ metrics: true })",
    );
  metrics?.watch({ db, clock, pool: () => db.poolStats() });

  const app = express();
  app.use(observeRequests({ logger, metrics, requestLog }));
  if (requestLog) captureAnswers(app);
  // Before the contract edge: not part of the contract, and answering while the database is down.
  const checkToken = tokenChecker({
    clock,
    addressOf: (req) => clientAddress(req),
    freeFailures: config.tokenFailuresBeforeWait ?? 5,
  });
  const ops = opsRoutes({
    db: db.probe ?? db,
    workers,
    metrics,
    metricsToken: config.metricsToken,
    checkToken,
    requestId: assignRequestId,
  });
  // One path test per API request, rather than a pass through the ops router's layers. Only the
  // methods they serve: a router answers OPTIONS itself (200 text/plain); any other method goes on
  // to the 404 every path answers for a method it does not serve.
  const servedByOps = (req: Request) => OPS_PATHS.has(req.path) && (req.method === "GET" || req.method === "HEAD");
  app.use((req, res, next) => (servedByOps(req) ? ops(req, res, next) : next()));
  // A real provider's webhooks: before the contract edge, which would parse the signed raw body as
  // JSON; POST only, for the same reason.
  const { webhooks } = ctx.provider;
  if (webhooks) {
    const providerRoutes = providerWebhookRoutes(ctx, webhooks, { requestId: assignRequestId });
    app.use(providerWebhookPath(webhooks.name), (req, res, next) =>
      req.method === "POST" ? providerRoutes(req, res, next) : next(),
    );
  }

  // Each request's database waits, from here, get one statement time-out plus the grace in all.
  // Entered again before dispatch: reading the body continues in the socket's context, not the request's.
  const budget = databaseBudget(db);
  app.use(budget);

  // Addresses without a key or session are counted in this process; keys, brands and sessions
  // where the database's windows say (shared by every process on PostgreSQL).
  const addresses = new FixedWindowCounter();
  const windows = requestWindowsOf(db);
  const recordKeyUse = keyUseRecorder(db, {
    onError: (error) => logger.warn({ error }, "could not record an API key's last use"),
  });
  const { idleMs, absoluteMs } = config.dashboardSession ?? DEFAULT_DASHBOARD_SESSION;
  const membersCtx = {
    db,
    clock,
    sessionIdleMs: idleMs,
    sessionAbsoluteMs: absoluteMs,
    totpBox: secretBox(config.totpEncryption ?? { current: undefined }),
  };
  const dashboardHttp = { publicBaseUrl: config.publicBaseUrl };
  mountContractEdge(app, {
    contract,
    trustProxy: config.trustProxy ?? false,
    docsDir,
    dashboardDir,
    dashboardGuard: dashboardGuard(
      membersCtx,
      dashboardHttp,
      dashboardLimiter({ addresses, windows, limits: config.dashboardRateLimit ?? DEFAULT_DASHBOARD_RATE_LIMITS }),
    ),
    servedAs: { url: `${config.publicBaseUrl}${API_BASE}`, description: servedAs },
    operatorGuard: operatorGuard(config.adminToken, checkToken),
    apiGuard: apiGuard({ clock, addresses, windows, recordKeyUse }),
    // Every operation of the contract has its handler here (a missing one fails to compile).
    handlers: {
      ...publicHandlers({ db, publicBaseUrl: config.publicBaseUrl, operations, version: contract.version }),
      ...streamHandlers(ctx),
      getAnalytics: analyticsHandler(ctx, contract),
      ...webhookHandlers(ctx),
      ...listenHandlers(ctx, { logger }),
      ...requestLogHandlers(ctx),
      ...deliveryHandlers(ctx),
      ...testClockHandlers(ctx),
      ...operatorHandlers({ db, clock }),
      ...dashboardHandlers({
        ctx,
        members: membersCtx,
        http: dashboardHttp,
        contract,
        requestsThisMinute: (brandId) => windows.brandCount(brandId, clock()),
      }),
    },
  });
  app.use(budget, dispatchOperation);
  app.use(noSuchEndpoint);
  app.use(errorHandler({ logger }));
  return app;
}
