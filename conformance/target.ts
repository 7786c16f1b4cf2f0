/**
 * What the suite runs against: the Prism mock, the real server (started in-process here), or
 * any URL. Each target says what it can do beyond answering HTTP, and scenarios that need more
 * are skipped there rather than failed.
 */
import { type ContractFaults, startFaultProxy } from "../testkit/contract-faults.ts";
import { randomBytes } from "node:crypto";
import { ADMIN_TOKEN, type Engine, freshDatabase, manualClock, startTestServer } from "../testkit/harness.ts";
import { startMock } from "../mock/prism.ts";
import { createSender } from "./client.ts";
import type { Contract } from "./contract.ts";
import { failingDatabase } from "./failing-database.ts";
import { yieldingDatabase } from "../server/store/yielding-database.ts";
import { createTenant, operatorClient } from "./tenants.ts";

export type TargetKind = "mock" | "server" | "url";

/**
 * - `state`: remembers what it is told (streams, webhooks), so behaviour can be checked.
 * - `operator`: brands and keys can be provisioned through /admin/v1.
 * - `faults`: the suite can make the database fail (to reach 500 db_error).
 */
export type Capability = "state" | "operator" | "faults";

export interface Target {
  name: string;
  kind: TargetKind;
  /** Base of the public paths: `…/api/v1`. */
  apiBase: string;
  adminBase: string | null;
  adminToken: string | null;
  /** An all-scopes test key that works here. */
  key: string;
  /**
   * A key of its own for each scenario, where a new key is a new brand (the dynamic mock): so one
   * scenario's streams and requests never meet another's limits. Without it, `key` is shared.
   */
  scenarioKey?(): string;
  capabilities: ReadonlySet<Capability>;
  /**
   * Hosts the target's operator exempted from the public-host rule (its WEBHOOK_ALLOW_HOSTS), so
   * scenarios expect those accepted, not refused. For a URL target, the suite's own WEBHOOK_ALLOW_HOSTS.
   */
  webhookAllowHosts: readonly string[];
  /**
   * With `faults`: every statement on streams, webhooks and creators fails while on, as the
   * database's failure or (`"unexpected"`) as a fault of the server's own code.
   */
  failDatabase?(on: boolean, how?: "database" | "unexpected"): void;
  /** Moves the server's clock on where it has a manual one; otherwise waits a little. */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

/** The mock accepts any well-formed key; this one has the shape of a real test key. */
export const MOCK_KEY = `svc_test_${"0123456789abcdefghijklmnopqrstuv"}`;

/** A well-formed key no one has used: on the dynamic mock, a brand of its own. */
export function newMockKey(environment: "test" | "live" = "test"): string {
  return `svc_${environment}_${randomBytes(16).toString("hex")}`;
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The static mock (Prism's documented examples: contract scenarios only), or the dynamic mock
 * (the server on an in-memory database, a brand per key: every scenario that needs no operator
 * API or database faults, each with a key of its own).
 */
export async function startMockTarget({ dynamic = false }: { dynamic?: boolean } = {}): Promise<Target> {
  const mock = await startMock({ dynamic });
  return {
    name: dynamic ? "dynamic mock" : "mock",
    kind: "mock",
    apiBase: mock.apiBase,
    adminBase: null,
    adminToken: null,
    key: MOCK_KEY,
    ...(dynamic ? { scenarioKey: () => newMockKey() } : {}),
    capabilities: new Set(dynamic ? ["state"] : []),
    webhookAllowHosts: [],
    tick: () => wait(2),
    stop: () => mock.stop(),
  };
}

/**
 * The real app in this process on a fresh in-memory PGlite (letting the event loop turn before
 * each statement, see yielding-database.ts), or a new PostgreSQL database with `engine`, on a
 * free loopback port. Its clock
 * is manual (starting now), so scenarios can move time on and rate-limit windows never roll over
 * in the middle of a run.
 */
export async function startServerTarget(
  contract: Contract,
  {
    faults,
    webhookAllowHosts = [],
    engine = "pglite",
  }: { faults?: ContractFaults; webhookAllowHosts?: string[]; engine?: Engine } = {},
): Promise<Target> {
  const fresh = await freshDatabase(engine);
  const database = failingDatabase(yieldingDatabase(fresh.db));
  const clock = manualClock(new Date());
  const server = await startTestServer({ database: database.db, clock, config: { webhookAllowHosts } });
  // With faults, the suite talks to the server through a proxy that breaks its answers.
  const proxy = faults ? await startFaultProxy(server.baseUrl, faults) : null;
  try {
    const origin = proxy?.url ?? server.baseUrl;
    const bases = { api: `${origin}/api/v1`, admin: `${origin}/admin/v1`, adminToken: ADMIN_TOKEN };
    const tenant = await createTenant(operatorClient(createSender(contract, bases), bases));
    return {
      name: faults ? "server (with faults)" : "server",
      kind: "server",
      apiBase: bases.api,
      adminBase: bases.admin,
      adminToken: ADMIN_TOKEN,
      key: (await tenant.key()).key,
      capabilities: new Set(["state", "operator", "faults"]),
      webhookAllowHosts,
      failDatabase: database.fail,
      async tick() {
        clock.advance(1_000);
      },
      async stop() {
        await proxy?.close();
        await server.close();
        await fresh.drop();
      },
    };
  } catch (error) {
    await proxy?.close();
    await server.close();
    await fresh.drop();
    throw error;
  }
}

/**
 * A deployment at `url` (its API base, e.g. `https://api.example.com/api/v1`). With ADMIN_TOKEN
 * the suite provisions its own brands through the operator API (at ADMIN_URL, default: the same
 * origin's /admin/v1); otherwise it uses CONFORMANCE_API_KEY, an all-scopes test key, and runs
 * what one key can show. `stateless` (a Prism elsewhere) runs the contract scenarios only.
 */
export async function urlTarget(
  contract: Contract,
  url: string,
  env: NodeJS.ProcessEnv,
  { stateless = false } = {},
): Promise<Target> {
  const apiBase = url.replace(/\/+$/, "");
  const adminToken = env.ADMIN_TOKEN || null;
  const adminBase = adminToken
    ? (env.ADMIN_URL || `${apiBase.replace(/\/api\/v1$/, "")}/admin/v1`).replace(/\/+$/, "")
    : null;
  let key = env.CONFORMANCE_API_KEY || (stateless ? MOCK_KEY : "");
  if (!key && adminToken) {
    const bases = { api: apiBase, admin: adminBase, adminToken };
    key = (await (await createTenant(operatorClient(createSender(contract, bases), bases))).key()).key;
  }
  if (!key)
    throw new Error(
      `--target ${url}: set CONFORMANCE_API_KEY (an all-scopes svc_test_ key) or ADMIN_TOKEN (to provision brands), or pass --stateless`,
    );
  const capabilities = new Set<Capability>(stateless ? [] : adminToken ? ["state", "operator"] : ["state"]);
  return {
    name: url,
    kind: "url",
    apiBase,
    adminBase,
    adminToken,
    key,
    capabilities,
    webhookAllowHosts: (env.WEBHOOK_ALLOW_HOSTS ?? "")
      .split(",")
      .map((host) => host.trim().toLowerCase())
      .filter(Boolean),
    tick: () => wait(2),
    stop: async () => undefined,
  };
}
