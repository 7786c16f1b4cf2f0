import type { AddressInfo } from "node:net";
import type { Express } from "express";
import { loadBuiltContract } from "../contract/built.ts";
import type { Contract } from "../contract/contract.ts";
import { createApp } from "./app.ts";
import type { Config } from "./config.ts";
import { createHttpServer, type HttpServer } from "./http/transport.ts";
import type { Logger } from "./observability/logger.ts";
import { READINESS_TIMEOUT_MS } from "./observability/readiness.ts";
import {
  backgroundFailure,
  createObservability,
  type Observability,
  observeAttempts,
  observedSweep,
} from "./observability/observability.ts";
import type { AgentProvider } from "./providers/agent-provider.ts";
import { agentProviderFor } from "./providers/select.ts";
import { httpsTransport, type WebhookTransport } from "./providers/webhook-transport.ts";
import type { Clock } from "./services/context.ts";
import { deliverDue } from "./services/delivery.ts";
import { accountRetention } from "./services/members/retention.ts";
import { requestLogRetention } from "./services/request-log.ts";
import { RequestLogWriter } from "./observability/request-log.ts";
import { sweepStreamsAndRooms } from "./services/provider-rooms.ts";
import { seedCreators } from "./store/creators.ts";
import { type Database, openDatabase } from "./store/database.ts";
import { migrateDatabase } from "./store/migrate.ts";
import { secretBox } from "./domain/secret-box.ts";
import { resealStoredSecrets } from "./services/members/two-factor.ts";
import { startDeliveryWorker } from "./workers/delivery-worker.ts";
import { runPeriodically } from "./workers/periodic.ts";

/** What a caller may put in place of what the config would build. Everything else comes from the config. */
export interface RuntimeOverrides {
  /** An open, migrated database that stays the caller's to close; otherwise config.databaseUrl is opened, migrated and closed by stop(). */
  db?: Database;
  clock?: Clock;
  provider?: AgentProvider;
  /** How webhooks go out; otherwise HTTPS under the config's time-out and allow-list. */
  transport?: WebhookTransport;
  /** Logger, metrics and background jobs' state; otherwise made from config.logLevel (or `logger`) and config.metricsToken. */
  observability?: Observability;
  /** Where the logs go, when `observability` is not given (tests: a silent or a capturing logger). */
  logger?: Logger;
  /** The contract to serve instead of the build's (tests: a rule changed in the contract alone). */
  contract?: Contract;
  /**
   * What the HTTP server serves in place of the app: the app inside the caller's own handling
   * (the dynamic mock's key provisioning and X-Mock header, mock/dynamic.ts).
   */
  wrapApp?: (app: Express) => Express;
  /** What the served contract and docs call this deployment (createApp's `servedAs`). */
  servedAs?: string;
  /** Where the built docs are (createApp's `docsDir`; default build/docs). */
  docsDir?: string;
  /**
   * Whether start() runs the lifecycle sweeper and the webhook delivery worker (default true).
   * Tests on a manual clock leave them off and run one pass at a time with sweep() and deliver().
   */
  background?: boolean;
}

/** One part of a shutdown, reported as it finishes (serve.ts prints a line for each). */
export type StopEvent =
  | { part: "requests"; answered: number; cut: number }
  | { part: "lifecycle sweeper" }
  | { part: "delivery worker" }
  | { part: "database" };

export interface Runtime {
  db: Database;
  clock: Clock;
  observability: Observability;
  /** One pass of the lifecycle sweeper; returns the number of streams it moved. */
  sweep(): Promise<number>;
  /** One pass of the webhook delivery worker; returns the number of attempts made. */
  deliver(): Promise<number>;
  /** Writes the request log's queued entries now (they are written every half second anyway). */
  flushRequestLog(): Promise<void>;
  /**
   * Listens (on config.port and config.host unless `port` and `host` say otherwise; no host is
   * every interface), then mounts the app and starts the background jobs. Resolves with the port
   * and the base URL the app names in its documents.
   */
  start(listen?: { port?: number; host?: string }): Promise<{ port: number; publicBaseUrl: string }>;
  /** Requests received and not yet answered. */
  inFlight(): number;
  /**
   * Stops accepting requests and waits for those in flight (cut after config.httpRequestTimeoutMs),
   * for a sweep and the delivery attempts in progress, then closes the database if it opened it.
   */
  stop(report?: (event: StopEvent) => void): Promise<void>;
}

/** The database named by the config, migrated and holding the stock creators. */
export async function openConfiguredDatabase(config: Config): Promise<Database> {
  const { max, ...waits } = config.databasePool;
  const postgres = { poolMax: max, ...waits, probeTimeoutMs: READINESS_TIMEOUT_MS };
  const db = await openDatabase(config.databaseUrl, { dataDir: config.dataDir, postgres });
  const { newer } = await migrateDatabase(db);
  // A rollback without a restore: the newer version's migrations only added, which this one ignores.
  if (newer.length > 0)
    console.log(
      `The database has migrations of a newer version (${newer.join(", ")}); they only add, so this version runs on it.`,
    );
  await seedCreators(db);
  return db;
}

/**
 * With PORT=0 the operating system picks the port, and a base URL made from the configured port
 * (`http://localhost:0`) would send readers of the discovery document and the served contract
 * nowhere. Any other port is the one listened on, so the base URL stands as configured.
 */
function servedBaseUrl(config: Config, port: number): string {
  return config.port === 0 ? config.publicBaseUrl.replace(":0", `:${port}`) : config.publicBaseUrl;
}

/**
 * What a request log batch that could not be written leaves in the logs: one warning a minute at
 * most, with its cause (the database down, the log's table locked); the entries dropped are
 * counted in /metrics (`request_log_dropped_total`). Not an outage of its own: a locked table is
 * not a database away, and the jobs that find the database away already say so.
 */
function requestLogFailure(logger: Logger): (error: unknown) => void {
  let reportedAt = Number.NEGATIVE_INFINITY;
  let failed = 0;
  return (error) => {
    failed += 1;
    const now = Date.now();
    if (now - reportedAt < 60_000) return;
    reportedAt = now;
    logger.warn({ error, failed_batches: failed }, "request log: a batch could not be written, its entries dropped");
    failed = 0;
  };
}

/**
 * The composition root: the one place where the server's parts are made from the config and put
 * together (database, provider, webhook transport, observability, HTTP server, app, lifecycle
 * sweeper, delivery worker). serve.ts runs it for `npm start`; the test harness, the conformance
 * suite's in-process server and the benchmark run the same, with overrides.
 */
export async function createRuntime(config: Config, overrides: RuntimeOverrides = {}): Promise<Runtime> {
  const { clock = () => new Date(), background = true, logger } = overrides;
  // Read (and checked) before anything is opened: a contract that cannot be read stops the start.
  const contract = overrides.contract ?? loadBuiltContract();
  const observability =
    overrides.observability ??
    createObservability({
      logLevel: config.logLevel,
      metrics: config.metricsToken !== undefined,
      ...(logger ? { logger } : {}),
    });
  const ownsDb = overrides.db === undefined;
  const db = overrides.db ?? (await openConfiguredDatabase(config));
  // TOTP secrets stored in plain or under a previous key are sealed with TOTP_ENCRYPTION_KEY.
  if (config.totpEncryption.current) await resealStoredSecrets(db, secretBox(config.totpEncryption));
  const provider = overrides.provider ?? (await agentProviderFor(config, observability));
  const transport =
    overrides.transport ?? httpsTransport({ timeoutMs: config.webhookTimeoutMs, allowHosts: config.webhookAllowHosts });

  const forgetEnded = accountRetention();
  // The request log: written in batches off the request path; its retention runs with the sweep.
  const { metrics, logger: log } = observability;
  const requestLog = config.requestLog.enabled
    ? new RequestLogWriter({
        db,
        contract,
        // PostgreSQL compresses long bodies itself (TOAST), natively; the embedded database cheaper here.
        compressBodies: db.engine === "pglite",
        onWritten: (count) => metrics?.requestLogWritten.inc(count),
        onDropped: (reason, count) => metrics?.requestLogDropped.inc({ reason }, count),
        onError: requestLogFailure(log),
      })
    : undefined;
  const forgetRequests = requestLogRetention(config.requestLog, {
    onError: (error) => log.warn({ error }, "request log retention failed; it is tried again at its next look"),
  });
  const sweep = observedSweep(observability, async () => {
    const moved = await sweepStreamsAndRooms(
      {
        db,
        clock,
        provider,
        preparingTimeoutMs: config.preparingTimeoutMs,
        simAgentJoinMs: config.simAgentJoinMs,
      },
      forgetEnded,
    );
    await forgetRequests(db, clock());
    return moved;
  });
  const deliveryCtx = {
    db,
    clock,
    transport,
    timeoutMs: config.webhookTimeoutMs,
    retryScheduleMs: config.webhookRetryScheduleMs,
    onAttempt: observeAttempts(observability),
  };

  let http: HttpServer | undefined;
  const jobs: Array<{ part: "lifecycle sweeper" | "delivery worker"; job: { stop(): Promise<void> } }> = [];

  return {
    db,
    clock,
    observability,
    sweep,
    deliver: () => deliverDue(deliveryCtx),
    flushRequestLog: async () => requestLog?.flush(),
    inFlight: () => http?.inFlight() ?? 0,

    async start({ port: requested = config.port, host = config.host } = {}) {
      if (http) throw new Error("createRuntime: start() was already called");
      http = createHttpServer({
        requestTimeoutMs: config.httpRequestTimeoutMs,
        headersTimeoutMs: config.httpHeadersTimeoutMs,
        keepAliveTimeoutMs: config.httpKeepAliveTimeoutMs,
      });
      const { server } = http;
      // Listening comes before the app is made, so that with PORT=0 the discovery document and
      // the served contract name the port actually chosen.
      server.listen(requested, host);
      await new Promise<void>((resolve, reject) => server.once("listening", resolve).once("error", reject));
      const port = (server.address() as AddressInfo).port;
      const publicBaseUrl = servedBaseUrl(config, port);
      const app = createApp({
        db,
        contract,
        config: { ...config, publicBaseUrl },
        clock,
        provider,
        observability,
        requestLog,
        ...(overrides.servedAs === undefined ? {} : { servedAs: overrides.servedAs }),
        ...(overrides.docsDir === undefined ? {} : { docsDir: overrides.docsDir }),
      });
      http.serve(overrides.wrapApp ? overrides.wrapApp(app) : app);

      if (background) {
        const { workers } = observability;
        const api = http;
        const sweeper = runPeriodically(
          sweep,
          config.sweepIntervalMs,
          backgroundFailure(observability, "lifecycle sweep"),
        );
        jobs.push({ part: "lifecycle sweeper", job: workers.track("lifecycle_sweeper", sweeper) });
        const deliveries = startDeliveryWorker(deliveryCtx, {
          intervalMs: config.sweepIntervalMs,
          apiBusy: () => api.inFlight() > 0,
          onError: backgroundFailure(observability, "webhook delivery"),
        });
        jobs.push({ part: "delivery worker", job: workers.track("delivery_worker", deliveries) });
      }
      return { port, publicBaseUrl };
    },

    async stop(report = () => undefined) {
      await Promise.all([
        http
          ?.close(config.httpRequestTimeoutMs)
          .then(({ answered, cut }) => report({ part: "requests", answered, cut })),
        ...jobs.map(({ part, job }) => job.stop().then(() => report({ part }))),
      ]);
      // What the answered requests left for the log, written before the database closes.
      await requestLog?.stop();
      if (!ownsDb) return;
      await db.close();
      report({ part: "database" });
    },
  };
}
