/**
 * The dynamic mock (`npm run mock -- --dynamic`): the server itself (server/runtime.ts, as
 * `npm start` composes it) on an in-memory embedded database, behind the mock's interface. Any
 * well-formed key is accepted and becomes a brand of its own (keys.ts); a test key plays the
 * server's test mode and a live key its live mode on the simulated provider (no LiveKit), so every
 * answer, event and time is the server's. Decision and limits: docs/mock.md.
 *
 * In front of the server: every answer carries `X-Mock: dynamic`; the dashboard is not served
 * (the mock is the public API); a request that asks for a documented example (`Prefer: code=`
 * or `example=`) gets it from the static mock's engine, loaded on the first such request.
 */
import express, { type Express, type NextFunction, type Request, type Response } from "express";
import type { Contract } from "../contract/contract.ts";
import { API_BASE } from "../contract/operations.ts";
import { loadConfig } from "../server/config.ts";
import type { Vertical } from "../server/domain/types.ts";
import { DASHBOARD_BASE } from "../server/http/dashboard-app.ts";
import { errorHandler, noSuchEndpoint } from "../server/http/error-handler.ts";
import { assignRequestId } from "../server/http/pipeline.ts";
import type { Logger } from "../server/observability/logger.ts";
import { createObservability } from "../server/observability/observability.ts";
import { simulatedAgentProvider } from "../server/providers/simulated-agent.ts";
import { createRuntime } from "../server/runtime.ts";
import { wellFormedBearerKey } from "../server/services/auth.ts";
import { seedCreators } from "../server/store/creators.ts";
import type { Database } from "../server/store/database.ts";
import { openInMemory } from "../server/store/embedded-database.ts";
import { migrateDatabase } from "../server/store/migrate.ts";
import { yieldingDatabase } from "../server/store/yielding-database.ts";
import { createMockApp, DEFAULT_MOCK_VERTICAL, MOCK_HEADER } from "./app.ts";
import { MockKeys } from "./keys.ts";
import { parsePrefer } from "./prefer.ts";
import { loadPrismEngine } from "./prism-engine.ts";

/** What `npm run mock` says to `--seed`, which chose the generated data before the dynamic mock kept state. */
export const SEED_NOTE =
  "Note: --seed changes nothing: the dynamic mock keeps the data your requests make, per key, instead of generating it (docs/mock.md).";

export interface DynamicMockOptions {
  contract: Contract;
  /** Port to listen on; 0 picks a free one. */
  port: number;
  host: string;
  docsDir: string;
  vertical?: Vertical;
  /** Keys kept at once (keys.ts, default 100). */
  maxKeys?: number;
}

export interface RunningDynamicMock {
  url: string;
  /** The keys' brands (tests read how many are kept). */
  keys: MockKeys;
  db: Database;
  stop(): Promise<void>;
}

/**
 * A fresh database in memory, migrated, holding the stock creators (as `npm start` opens one).
 * Requests arriving together interleave on it as on PostgreSQL (yielding-database.ts), so that a
 * partner meets what production answers them (409 idempotency_key_in_use, for one).
 */
async function openMockDatabase(): Promise<Database> {
  const db = await openInMemory();
  try {
    await migrateDatabase(db);
    await seedCreators(db);
    return yieldingDatabase(db);
  } catch (error) {
    await db.close();
    throw error;
  }
}

/** `Prefer` names what only the static mock answers: a documented example, or a preference it explains. */
function asksTheStaticMock(req: Request): boolean {
  const prefer = req.get("prefer");
  if (prefer === undefined || !(req.path === API_BASE || req.path.startsWith(`${API_BASE}/`))) return false;
  const asked = parsePrefer(prefer);
  return ["code", "example", "dynamic", "seed"].some((name) => name in asked);
}

export async function startDynamicMock({
  contract,
  port,
  host,
  docsDir,
  vertical = DEFAULT_MOCK_VERTICAL,
  maxKeys,
}: DynamicMockOptions): Promise<RunningDynamicMock> {
  // The server's defaults, but for what makes it the mock: its port and address, no operator API
  // (no ADMIN_TOKEN), warnings only in the terminal. Nothing is read from the environment.
  const config = loadConfig({
    PORT: String(port),
    HOST: host,
    PUBLIC_BASE_URL: `http://${host}:${port}`,
    DATABASE_URL: "memory:",
    LOG_LEVEL: "warn",
  });
  const observability = createObservability({ logLevel: config.logLevel });
  const db = await openMockDatabase();
  const clock = () => new Date();
  let flushRequestLog: () => Promise<void> = async () => undefined;
  const keys = new MockKeys(db, {
    beforeForget: () => flushRequestLog(),
    vertical,
    clock,
    ...(maxKeys === undefined ? {} : { maxKeys }),
    onForgetError: (error) => observability.logger.warn({ error }, "mock: an evicted key's brand could not be removed"),
  });
  let examples: Promise<Express> | undefined;
  let publicUrl = config.publicBaseUrl;
  const staticMock = () => {
    examples ??= loadPrismEngine({ spec: contract.dereferenced }).then((prism) =>
      createMockApp({ contract, prism, publicUrl, docsDir, vertical }),
    );
    // A failure to load is reported to this request and tried again on the next.
    examples.catch(() => (examples = undefined));
    return examples;
  };

  const runtime = await createRuntime(config, {
    db,
    clock,
    contract,
    observability,
    provider: simulatedAgentProvider({ joinAfterMs: config.simAgentJoinMs }),
    servedAs: "This mock (dynamic: the server on data of its own, kept per key)",
    docsDir,
    wrapApp: (server) => mockFront(server, { keys, staticMock, logger: observability.logger }),
  }).catch(async (error: unknown) => {
    await db.close();
    throw error;
  });
  flushRequestLog = runtime.flushRequestLog;
  try {
    const started = await runtime.start({ port, host });
    publicUrl = started.publicBaseUrl;
  } catch (error) {
    await runtime.stop();
    await db.close();
    throw error;
  }
  let stopping: Promise<void> | undefined;
  return {
    url: publicUrl,
    keys,
    db,
    stop() {
      stopping ??= runtime.stop().then(() => db.close());
      return stopping;
    },
  };
}

/** What the mock puts in front of the server (see the module's comment). */
function mockFront(
  server: Express,
  { keys, staticMock, logger }: { keys: MockKeys; staticMock: () => Promise<Express>; logger: Logger },
): Express {
  const app = express();
  app.disable("x-powered-by");
  app.use((_req, res, next) => {
    res.set(MOCK_HEADER, "dynamic");
    next();
  });
  app.use(DASHBOARD_BASE, assignRequestId, noSuchEndpoint);
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (!asksTheStaticMock(req)) return next();
    staticMock().then(
      (examples) => examples(req, res, next),
      (error: unknown) => assignRequestId(req, res, () => next(error)),
    );
  });
  app.use((req: Request, res: Response, next: NextFunction) => {
    const key = wellFormedBearerKey(req.headers.authorization);
    if (!key) return next();
    keys.brandOf(key).then(
      () => next(),
      (error: unknown) => assignRequestId(req, res, () => next(error)),
    );
  });
  app.use(server);
  app.use(errorHandler({ logger }));
  return app;
}
