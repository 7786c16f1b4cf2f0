import { randomBytes } from "node:crypto";
import pg from "pg";
import type { components } from "../generated/api.ts";
import type { Contract } from "../contract/contract.ts";
import { adminClient, createBrand, createKey } from "../server/cli/admin-client.ts";
import { type Config, loadConfig, testDatabaseUrl } from "../server/config.ts";
import { silentLogger } from "../server/observability/logger.ts";
import type { Observability } from "../server/observability/observability.ts";
import type { AgentProvider } from "../server/providers/agent-provider.ts";
import type { WebhookTransport } from "../server/providers/webhook-transport.ts";
import { createRuntime, type StopEvent } from "../server/runtime.ts";
import { ALL_SCOPES, type Mode, type Scope } from "../server/domain/types.ts";
import { seedCreators, stockCreators } from "../server/store/creators.ts";
import { type Database, openDatabase } from "../server/store/database.ts";
import { migrate } from "../server/store/migrate.ts";

export const ADMIN_TOKEN = "test-admin-token-0123456789";

/** A clock tests move by hand, so lifecycle and billing run in milliseconds. */
export function manualClock(start = new Date("2026-11-20T12:00:00.000Z")) {
  let now = start.getTime();
  const clock = () => new Date(now);
  return Object.assign(clock, {
    advance(ms: number) {
      now += ms;
    },
    set(date: Date) {
      now = date.getTime();
    },
  });
}

export type ManualClock = ReturnType<typeof manualClock>;

export type Engine = "pglite" | "postgres";

/** Whether this test file has said why its PostgreSQL leg is skipped (test files get modules of their own). */
let skipReasonPrinted = false;

/** The engines to run a suite on: PGlite, and PostgreSQL when TEST_DATABASE_URL names one (otherwise it says why not, once). */
export function availableEngines(): Engine[] {
  if (testDatabaseUrl()) return ["pglite", "postgres"];
  if (!skipReasonPrinted) console.log(postgresSkipReason());
  skipReasonPrinted = true;
  return ["pglite"];
}

export function postgresSkipReason(): string | null {
  return testDatabaseUrl() ? null : "PostgreSQL leg skipped: TEST_DATABASE_URL is not set (.ci/run sets it).";
}

/**
 * A fresh, migrated database: PGlite in memory, or a new database on the PostgreSQL server of
 * TEST_DATABASE_URL (dropped again by `drop`), so test files never see each other's rows.
 */
export async function freshDatabase(engine: Engine): Promise<{ db: Database; url: string; drop(): Promise<void> }> {
  if (engine === "pglite") {
    const db = await openDatabase("memory:");
    await migrate(db);
    await seedCreators(db);
    return { db, url: "memory:", drop: () => db.close() };
  }
  const scratch = await scratchPostgresDatabase(testDatabaseUrl()!);
  const db = await openDatabase(scratch.url);
  await migrate(db);
  await seedCreators(db);
  return {
    db,
    url: scratch.url,
    async drop() {
      await db.close();
      await scratch.drop();
    },
  };
}

/** A new, empty database on the PostgreSQL server of `serverUrl`; `drop` removes it even while clients are connected. */
export async function scratchPostgresDatabase(
  serverUrl: string,
  prefix = "lsh_test",
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export interface CallOptions {
  key?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface CallResult<T = any> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

type BrandInput = components["schemas"]["BrandCreate"];

export interface TestServer {
  db: Database;
  clock: ManualClock;
  baseUrl: string;
  observability: Observability;
  call<T = any>(method: string, path: string, options?: CallOptions): Promise<CallResult<T>>;
  brand(input?: Partial<BrandInput>): Promise<{ id: string }>;
  key(
    brandId: string,
    options?: { environment?: Mode; scopes?: Scope[]; expiresAt?: string },
  ): Promise<{ key: string; keyId: string }>;
  /** A brand with an all-scopes key, ready to call the API. */
  tenant(input?: Partial<BrandInput> & { environment?: Mode }): Promise<{ brandId: string; key: string }>;
  sweep(): Promise<number>;
  /** One pass of the webhook delivery worker; returns the number of attempts made. */
  deliver(): Promise<number>;
  /** Writes the request log's queued entries now. */
  flushRequestLog(): Promise<void>;
  /** Stops as on SIGTERM; `report` is told what each part did (requests answered and cut…). */
  close(report?: (event: StopEvent) => void): Promise<void>;
}

/** The server's own defaults (config.ts), with the operator API on so tests can provision through it. */
export const CONFIG: Config = loadConfig({ ADMIN_TOKEN });

export const CREATOR_ID = stockCreators()[0]!.id;

/**
 * The server as main.ts composes it (server/runtime.ts), on an ephemeral loopback port with a
 * fresh database and a manual clock, its background jobs off: tests run them a pass at a time.
 */
export async function startTestServer(
  options: {
    engine?: Engine;
    /** Settings over the server's defaults (CONFIG). */
    config?: Partial<Config>;
    provider?: AgentProvider;
    clock?: ManualClock;
    /** An existing database (restart tests); it is not dropped on close. */
    database?: Database;
    delivery?: { transport: WebhookTransport; timeoutMs?: number; retryScheduleMs?: number[] };
    /** The contract to serve instead of the build's. */
    contract?: Contract;
    /** Logger, metrics (needed with config.metricsToken) and background jobs' state; silent logs by default. */
    observability?: Observability;
  } = {},
): Promise<TestServer> {
  const engine = options.engine ?? (testDatabaseUrl() ? "postgres" : "pglite");
  const scratch = options.database || engine === "pglite" ? null : await scratchPostgresDatabase(testDatabaseUrl()!);
  const { delivery } = options;
  const config: Config = {
    ...CONFIG,
    databaseUrl: scratch?.url ?? "memory:",
    ...(delivery?.timeoutMs !== undefined ? { webhookTimeoutMs: delivery.timeoutMs } : {}),
    ...(delivery?.retryScheduleMs ? { webhookRetryScheduleMs: delivery.retryScheduleMs } : {}),
    ...options.config,
  };
  const clock = options.clock ?? manualClock();
  const runtime = await createRuntime(config, {
    clock,
    background: false,
    ...(options.database ? { db: options.database } : {}),
    ...(options.provider ? { provider: options.provider } : {}),
    ...(delivery ? { transport: delivery.transport } : {}),
    ...(options.contract ? { contract: options.contract } : {}),
    ...(options.observability ? { observability: options.observability } : { logger: silentLogger() }),
  }).catch(async (error: unknown) => {
    await scratch?.drop();
    throw error;
  });
  const { port } = await runtime.start({ port: 0, host: "127.0.0.1" });
  const baseUrl = `http://127.0.0.1:${port}`;
  const { db } = runtime;

  const call = async (method: string, path: string, { key, body, rawBody, headers = {} }: CallOptions = {}) => {
    const response = await fetch(baseUrl + path, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined || rawBody !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      body: rawBody ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, text, body: parsed as any };
  };

  // Brands and keys are made through the operator API, as an operator makes them.
  const operator = () => {
    if (!config.adminToken)
      throw new Error(
        "startTestServer: brands and keys are made through the operator API; leave config.adminToken set",
      );
    return adminClient(`${baseUrl}/admin/v1`, config.adminToken);
  };

  const brand = async (input: Partial<BrandInput> = {}) => {
    const created = await createBrand(operator(), {
      name: "Test Brand",
      vertical: "live-commerce",
      plan: "growth",
      credits_cents: 1_000_000,
      ...input,
    });
    return { id: created.brand_id };
  };

  let keyCount = 0;
  const key = async (
    brandId: string,
    {
      environment = "test",
      scopes = [...ALL_SCOPES],
      expiresAt,
    }: { environment?: Mode; scopes?: Scope[]; expiresAt?: string } = {},
  ) => {
    const created = await createKey(operator(), {
      brand_id: brandId,
      // A brand's active keys of a mode have distinct names.
      name: `test key ${++keyCount}`,
      environment,
      scopes,
      expires_at: expiresAt ?? null,
    });
    return { key: created.key, keyId: created.key_id };
  };

  return {
    db,
    clock,
    baseUrl,
    observability: runtime.observability,
    call,
    brand,
    key,
    async tenant({ environment = "test", ...input } = {}) {
      const { id } = await brand(input);
      return { brandId: id, key: (await key(id, { environment })).key };
    },
    sweep: runtime.sweep,
    flushRequestLog: runtime.flushRequestLog,
    async deliver() {
      if (!delivery) throw new Error("startTestServer({ delivery }) is needed to deliver webhooks");
      return runtime.deliver();
    },
    async close(report) {
      await runtime.stop(report);
      await scratch?.drop();
    },
  };
}

/** A valid POST /streams body; override fields per test. */
export function streamBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    creator_id: CREATOR_ID,
    product_name: "Summer sneakers drop",
    platform: "youtube",
    duration_minutes: 30,
    ...overrides,
  };
}
