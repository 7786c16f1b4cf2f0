/**
 * The servers the fuzz test (server/tests/fuzz.test.ts) runs against, each with every endpoint
 * switched on: the operator API, /metrics, and the LiveKit provider (whose webhook endpoint
 * exists only then) pointed at a local stand-in. In this process (the harness), or as a process
 * of its own (`node server/main.ts`, as `npm start` runs it), so that a crash shows as an exit.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FuzzTarget } from "../conformance/fuzz/session.ts";
import { liveKitAgentProvider } from "../server/providers/livekit/provider.ts";
import { ADMIN_TOKEN, type Engine, manualClock, scratchPostgresDatabase, startTestServer } from "./harness.ts";
import { testDatabaseUrl } from "../server/config.ts";
import { LiveKitStandIn } from "./livekit-stand-in.ts";
import { runServer, serverOrigin, stop } from "./server-process.ts";

export const METRICS_TOKEN = "fuzz-metrics-token-0123456789";
/** A fuzz run sends thousands of dashboard requests in a minute, from one session and address: never limited. */
const ROOMY_DASHBOARD_LIMIT = 1_000_000;
const AGENT_NAME = "fuzz-agent";
const ROOMY_TOKEN_FAILURES = 1_000_000;

export interface RunningFuzzTarget extends FuzzTarget {
  stop(): Promise<void>;
}

/** The server in this process on a fresh database of `engine`; its background jobs are off (the harness runs them by hand). */
export async function inProcessFuzzTarget(engine: Engine): Promise<RunningFuzzTarget> {
  const standIn = await new LiveKitStandIn().start();
  const provider = liveKitAgentProvider({
    url: standIn.url.replace(/^http/, "ws"),
    apiKey: standIn.apiKey,
    apiSecret: standIn.apiSecret,
    agentName: AGENT_NAME,
    requestTimeoutMs: 1_000,
    checkIntervalMs: 30_000,
    preparingTimeoutMs: 300_000,
  });
  // The clock starts at the real time: LiveKit's webhook tokens are checked against it.
  const server = await startTestServer({
    engine,
    provider,
    clock: manualClock(new Date()),
    config: {
      metricsToken: METRICS_TOKEN,
      // The fuzz sends wrong tokens on purpose, all from one address, and right ones after them.
      tokenFailuresBeforeWait: ROOMY_TOKEN_FAILURES,
      dashboardRateLimit: { perSession: ROOMY_DASHBOARD_LIMIT, perAddress: ROOMY_DASHBOARD_LIMIT },
    },
  }).catch(async (error: unknown) => {
    await standIn.stop();
    throw error;
  });
  return {
    name: `${engine}, in this process`,
    port: Number(new URL(server.baseUrl).port),
    adminToken: ADMIN_TOKEN,
    metricsToken: METRICS_TOKEN,
    livekit: { apiKey: standIn.apiKey, apiSecret: standIn.apiSecret },
    backgroundJobs: false,
    exited: () => null,
    output: () => "",
    async stop() {
      await server.close();
      await standIn.stop();
    },
  };
}

/** `server/main.ts` in a process of its own, on a fresh database of `engine`, logging errors only. */
export async function processFuzzTarget(engine: Engine): Promise<RunningFuzzTarget> {
  const standIn = await new LiveKitStandIn().start();
  const dataDir = engine === "pglite" ? mkdtempSync(join(tmpdir(), "lsh-fuzz-")) : null;
  const scratch = engine === "postgres" ? await scratchPostgresDatabase(testDatabaseUrl()!) : null;
  const cleanUp = async () => {
    await standIn.stop();
    await scratch?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  const server = runServer({
    ...(scratch ? { DATABASE_URL: scratch.url } : { DATA_DIR: dataDir! }),
    ADMIN_TOKEN,
    METRICS_TOKEN,
    AGENT_PROVIDER: "livekit",
    LIVEKIT_URL: standIn.url.replace(/^http/, "ws"),
    LIVEKIT_API_KEY: standIn.apiKey,
    LIVEKIT_API_SECRET: standIn.apiSecret,
    LIVEKIT_AGENT_NAME: AGENT_NAME,
    LOG_LEVEL: "error",
    DASHBOARD_RATE_LIMIT_PER_MINUTE: String(ROOMY_DASHBOARD_LIMIT),
    DASHBOARD_SIGNED_OUT_RATE_LIMIT_PER_MINUTE: String(ROOMY_DASHBOARD_LIMIT),
    TOKEN_FAILURES_BEFORE_WAIT: String(ROOMY_TOKEN_FAILURES),
  });
  let port: number;
  try {
    port = Number(new URL(await serverOrigin(server)).port);
  } catch (error) {
    await stop(server, "SIGKILL");
    await cleanUp();
    throw error;
  }
  const tail = (text: string) => text.slice(-4_000);
  return {
    name: `${engine}, server process`,
    port,
    adminToken: ADMIN_TOKEN,
    metricsToken: METRICS_TOKEN,
    livekit: { apiKey: standIn.apiKey, apiSecret: standIn.apiSecret },
    backgroundJobs: true,
    exited() {
      const { exitCode, signalCode } = server.child;
      return exitCode === null && signalCode === null ? null : `exit code ${exitCode}, signal ${signalCode}`;
    },
    output: () => `stdout (end):\n${tail(server.stdout())}\nstderr (end):\n${tail(server.stderr())}`,
    async stop() {
      await stop(server, "SIGKILL");
      await cleanUp();
    },
  };
}
