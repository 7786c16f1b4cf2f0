import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { startPrism as startBarePrism } from "../../mock/prism.ts";
import { pinServer } from "./cores.ts";
import type { CapturedResponse } from "../servers/captured.ts";
import { announcedPort, type Child, ROOT, startNode } from "./children.ts";

export type TargetKind = "real" | "framework" | "physical" | "prism";

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
}

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
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...extraEnv,
    PORT: "0",
    DATABASE_URL: databaseUrl,
    ADMIN_TOKEN: adminToken,
  };
  delete env.PUBLIC_BASE_URL;
  const child = await startNode("server/main.ts", {
    env,
    nodeArgs,
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
  };
}

/** The framework or physical ceiling, replaying the real server's captured responses. */
export async function startCeiling(
  kind: "framework" | "physical",
  captured: CapturedResponse[],
  nodeArgs: string[] = [],
): Promise<Target> {
  const dir = `${ROOT}.bench`;
  mkdirSync(dir, { recursive: true });
  const file = `${dir}/captured-responses.json`;
  writeFileSync(file, JSON.stringify(captured, null, 2));
  const child = await startNode(`bench/servers/${kind}.ts`, { args: [file], nodeArgs, ready: announcedPort });
  const label = kind === "framework" ? "framework ceiling" : "physical ceiling";
  return { kind, label, url: `http://127.0.0.1:${child.info}`, prefix: "/api/v1", pid: child.pid, stop: child.stop };
}

/** Bare Prism on openapi.yaml (static examples): the mock's engine, without the request handling `npm run mock` puts in front. */
export async function startPrism(): Promise<Target> {
  const mock = await startBarePrism();
  pinServer(mock.process.pid!);
  return { kind: "prism", label: "Prism mock", url: mock.url, prefix: "", pid: mock.process.pid!, stop: mock.stop };
}
