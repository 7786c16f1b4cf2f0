import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { startPrism as startBarePrism } from "../../mock/prism.ts";
import { pinServer } from "./cores.ts";
import type { CapturedResponse } from "../servers/captured.ts";
import { announcedPort, type Child, ROOT, startNode } from "./children.ts";
import type { Tenant } from "./tenant.ts";

export type TargetKind = "real" | "framework" | "physical" | "prism" | "lean" | "full-stack";

export interface Target {
  kind: TargetKind;
  /** Row label, e.g. "real server (PGlite)". */
  label: string;
  url: string;
  /** Where the public paths are served: /api/v1, or bare on Prism. */
  prefix: string;
  pid: number;
  stop(): Promise<void>;
}

export interface RealServer extends Target {
  adminToken: string;
  child: Child;
  /** Bearer token of its GET /metrics: every real server runs with metrics on, as production does. */
  metricsToken: string;
}

/** A metrics token for the servers the bench starts (METRICS_TOKEN wants 16 characters or more). */
export const newMetricsToken = (): string => randomBytes(16).toString("hex");

/**
 * The real server exactly as `npm start` runs it (server/main.ts: migrations, lifecycle sweeper,
 * webhook worker), on a free port, with an operator token for setting up the benchmark brand.
 */
export async function startRealServer({
  databaseUrl,
  label,
  nodeArgs = [],
  probe = false,
  env: extraEnv = {},
}: {
  /** "" for the embedded database on disk, in the directory `env.DATA_DIR` names. */
  databaseUrl: string;
  label: string;
  /** Settings beside the database's (DATA_DIR). */
  env?: NodeJS.ProcessEnv;
  nodeArgs?: string[];
  /** Preload bench/servers/probe.ts, which reports RSS over IPC (memory check). */
  probe?: boolean;
}): Promise<RealServer> {
  const adminToken = randomBytes(24).toString("hex");
  const metricsToken = newMetricsToken();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    METRICS_TOKEN: metricsToken,
    ...extraEnv,
    PORT: "0",
    DATABASE_URL: databaseUrl,
    ADMIN_TOKEN: adminToken,
  };
  delete env.PUBLIC_BASE_URL;
  const child = await startNode("server/main.ts", {
    env,
    nodeArgs,
    // In-memory PGlite runs initdb at every start: on a loaded machine that takes minutes.
    timeoutMs: 180_000,
    ...(probe ? { imports: ["./bench/servers/probe.ts"], ipc: true } : {}),
    ready: (line) => {
      const port = /API:\s+http:\/\/[^:/]+:(\d+)\/api\/v1/.exec(line)?.[1];
      return port === undefined ? undefined : Number(port);
    },
  });
  return {
    kind: "real",
    label,
    url: `http://127.0.0.1:${child.info}`,
    prefix: "/api/v1",
    pid: child.pid,
    stop: child.stop,
    adminToken,
    child,
    metricsToken,
  };
}

/** Writes the captured responses where a bench server started next reads them; returns the file. */
function writeCaptured(captured: CapturedResponse[]): string {
  const dir = `${ROOT}.bench`;
  mkdirSync(dir, { recursive: true });
  const file = `${dir}/captured-responses.json`;
  writeFileSync(file, JSON.stringify(captured, null, 2));
  return file;
}

/** The framework or physical ceiling, replaying the real server's captured responses. */
export async function startCeiling(
  kind: "framework" | "physical",
  captured: CapturedResponse[],
  nodeArgs: string[] = [],
): Promise<Target> {
  const child = await startNode(`bench/servers/${kind}.ts`, {
    args: [writeCaptured(captured)],
    nodeArgs,
    ready: announcedPort,
  });
  const label = kind === "framework" ? "framework ceiling" : "physical ceiling";
  return { kind, label, url: `http://127.0.0.1:${child.info}`, prefix: "/api/v1", pid: child.pid, stop: child.stop };
}

/**
 * The lean reference (bench/servers/lean-reference.ts): the server's kinds of per-request work
 * (key hash, Map look-up, pino line, prom-client observation) on bare Express 5, from memory.
 */
export async function startLeanReference(captured: CapturedResponse[], key: string): Promise<Target> {
  const child = await startNode("bench/servers/lean-reference.ts", {
    args: [writeCaptured(captured), key],
    ready: announcedPort,
  });
  return {
    kind: "lean",
    label: "lean reference",
    url: `http://127.0.0.1:${child.info}`,
    prefix: "/api/v1",
    pid: child.pid,
    stop: child.stop,
  };
}

/**
 * The full-stack ceiling (bench/servers/full-stack-ceiling.ts): the server's own app, with metrics
 * on, in front of a stub database answering recorded rows at once. It sets up its own brand, so
 * it comes with its own tenant.
 */
export async function startFullStackCeiling(
  databaseUrl: string,
): Promise<{ target: Target; tenant: Tenant; metricsToken: string }> {
  const metricsToken = newMetricsToken();
  const child = await startNode("bench/servers/full-stack-ceiling.ts", {
    env: { ...process.env, DATABASE_URL: databaseUrl, METRICS_TOKEN: metricsToken },
    ready: (line) => {
      if (!line.startsWith("{")) return undefined;
      const parsed = JSON.parse(line) as { port?: number; tenant?: Tenant };
      return parsed.port !== undefined && parsed.tenant ? (parsed as { port: number; tenant: Tenant }) : undefined;
    },
  });
  const target: Target = {
    kind: "full-stack",
    label: "full-stack ceiling",
    url: `http://127.0.0.1:${child.info.port}`,
    prefix: "/api/v1",
    pid: child.pid,
    stop: child.stop,
  };
  return { target, tenant: child.info.tenant, metricsToken };
}

/** Bare Prism on openapi.yaml (static examples): the mock's engine, without the request handling `npm run mock` puts in front. */
export async function startPrism(): Promise<Target> {
  const mock = await startBarePrism();
  pinServer(mock.process.pid!);
  return { kind: "prism", label: "Prism mock", url: mock.url, prefix: "", pid: mock.process.pid!, stop: mock.stop };
}
