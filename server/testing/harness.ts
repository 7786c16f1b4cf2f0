import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import pg from "pg";
import { loadContract } from "../../contract/contract.ts";
import { type AppConfig, type AppFaults, createApp } from "../app.ts";
import { testDatabaseUrl } from "../config.ts";
import { silentLogger } from "../observability/logger.ts";
import { createObservability, type Observability, observeAttempts, observedSweep } from "../observability/observability.ts";
import type { AgentProvider } from "../providers/agent-provider.ts";
import { simulatedAgentProvider } from "../providers/simulated-agent.ts";
import type { WebhookTransport } from "../providers/webhook-transport.ts";
import { deliverDue } from "../services/delivery.ts";
import { sweepStreamsAndRooms } from "../services/provider-rooms.ts";
import { type BrandInput, createBrand, createKey } from "../services/operator.ts";
import { ALL_SCOPES, type Mode, type Scope } from "../domain/types.ts";
import { seedCreators, stockCreators } from "../store/creators.ts";
import { type Database, openDatabase } from "../store/database.ts";
import { migrate } from "../store/migrate.ts";

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

/** The engines this run can test: PGlite always, PostgreSQL when TEST_DATABASE_URL is set. */
export function availableEngines(): Engine[] {
  if (testDatabaseUrl()) return ["pglite", "postgres"];
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
export async function scratchPostgresDatabase(serverUrl: string, prefix = "lsh_test"): Promise<{ url: string; drop(): Promise<void> }> {
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

export interface TestServer {
  db: Database;
  clock: ManualClock;
  baseUrl: string;
  observability: Observability;
  call<T = any>(method: string, path: string, options?: CallOptions): Promise<CallResult<T>>;
  brand(input?: Partial<BrandInput>): Promise<{ id: string }>;
  key(brandId: string, options?: { environment?: Mode; scopes?: Scope[]; expiresAt?: string }): Promise<{ key: string; keyId: string }>;
  /** A brand with an all-scopes key, ready to call the API. */
  tenant(input?: Partial<BrandInput> & { environment?: Mode }): Promise<{ brandId: string; key: string }>;
  sweep(): Promise<number>;
  /** One pass of the webhook delivery worker; returns the number of attempts made. */
  deliver(): Promise<number>;
  close(): Promise<void>;
}

export const CONFIG: AppConfig = {
  adminToken: ADMIN_TOKEN,
  publicBaseUrl: "http://localhost:8080",
  preparingTimeoutMs: 300_000,
  simAgentJoinMs: 3_000,
  webhookAllowHosts: [],
};

export const CREATOR_ID = stockCreators()[0]!.id;

/** The app on an ephemeral loopback port with a fresh database and a manual clock. */
export async function startTestServer(
  options: {
    engine?: Engine;
    config?: Partial<AppConfig>;
    provider?: AgentProvider;
    clock?: ManualClock;
    /** An existing database (restart tests); it is not dropped on close. */
    database?: Database;
    delivery?: { transport: WebhookTransport; timeoutMs?: number; retryScheduleMs?: number[] };
    /** Deliberate contract breaks (see AppFaults), for testing the conformance suite. */
    faults?: AppFaults;
    /** Logger, metrics (needed with config.metricsToken) and background jobs' state; silent logs by default. */
    observability?: Observability;
  } = {},
): Promise<TestServer> {
  const engine = options.engine ?? (testDatabaseUrl() ? "postgres" : "pglite");
  const { db, drop } = options.database ? { db: options.database, drop: async () => undefined } : await freshDatabase(engine);
  const clock = options.clock ?? manualClock();
  const config = { ...CONFIG, ...options.config };
  const provider = options.provider ?? simulatedAgentProvider({ joinAfterMs: config.simAgentJoinMs });
  const observability = options.observability ?? createObservability({ logger: silentLogger(), metrics: config.metricsToken !== undefined });
  const app = createApp({ db, contract: await loadContract(), config, clock, provider, observability, ...(options.faults ? { faults: options.faults } : {}) });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ctx = { db, clock, provider, preparingTimeoutMs: config.preparingTimeoutMs, simAgentJoinMs: config.simAgentJoinMs };

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
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, text, body: parsed as any };
  };

  const brand = async (input: Partial<BrandInput> = {}) => {
    const created = await db.transaction((tx) =>
      createBrand(tx, { name: "Test Brand", vertical: "live-commerce", plan: "growth", credits_cents: 1_000_000, ...input }, clock()),
    );
    return { id: created.id };
  };

  const key = async (brandId: string, { environment = "test", scopes = [...ALL_SCOPES], expiresAt }: { environment?: Mode; scopes?: Scope[]; expiresAt?: string } = {}) => {
    const { record, key } = await createKey(db, { brand_id: brandId, name: "test key", environment, scopes, expires_at: expiresAt ?? null }, clock());
    return { key, keyId: record.id };
  };

  return {
    db,
    clock,
    baseUrl,
    observability,
    call,
    brand,
    key,
    async tenant({ environment = "test", ...input } = {}) {
      const { id } = await brand(input);
      return { brandId: id, key: (await key(id, { environment })).key };
    },
    sweep: observedSweep(observability, () => sweepStreamsAndRooms(ctx)),
    async deliver() {
      if (!options.delivery) throw new Error("startTestServer({ delivery }) is needed to deliver webhooks");
      const { transport, timeoutMs = 2_000, retryScheduleMs = [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000] } = options.delivery;
      return deliverDue({ db, clock, transport, timeoutMs, retryScheduleMs, onAttempt: observeAttempts(observability) });
    },
    async close() {
      await new Promise((resolve) => server.close(resolve));
      await drop();
    },
  };
}

/** A valid POST /streams body; override fields per test. */
export function streamBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { creator_id: CREATOR_ID, product_name: "Summer sneakers drop", platform: "youtube", duration_minutes: 30, ...overrides };
}
