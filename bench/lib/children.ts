import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { terminate } from "../../mock/prism.ts";
import { pinServer } from "./cores.ts";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface Child {
  process: ChildProcess;
  pid: number;
  /** SIGTERM, then SIGKILL after 5 s; resolves once the process has exited. Safe to call twice. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
const cleanups = new Set<() => Promise<void>>();

/** Kills every child still running; called on exit, on SIGINT/SIGTERM and on failure. */
export function killAll(): void {
  for (const child of running) child.kill("SIGKILL");
  running.clear();
}

/** Runs `cleanup` too if the benchmark is interrupted (e.g. dropping a scratch database); returns `cleanup` to call normally. */
export function onInterrupt(cleanup: () => Promise<void>): () => Promise<void> {
  cleanups.add(cleanup);
  return () => {
    cleanups.delete(cleanup);
    return cleanup();
  };
}

process.once("exit", killAll);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, async () => {
    killAll();
    await Promise.allSettled([...cleanups].map((cleanup) => cleanup()));
    process.exit(130);
  });
}

/**
 * Starts `node [nodeArgs] [--import file…] script args` (plain Node with its own type stripping, as
 * `npm start` runs the server, so the PID is the server's and --cpu-prof/--expose-gc apply to it) and resolves with what `ready` extracts
 * from its stdout. Output is kept to explain a failed start.
 */
export async function startNode<T>(
  script: string,
  {
    args = [],
    nodeArgs = [],
    imports = [],
    env = process.env,
    ipc = false,
    ready,
    timeoutMs = 60_000,
  }: {
    args?: string[];
    nodeArgs?: string[];
    imports?: string[];
    env?: NodeJS.ProcessEnv;
    ipc?: boolean;
    ready: (line: string) => T | undefined;
    timeoutMs?: number;
  },
): Promise<Child & { info: T }> {
  // Everything the child prints goes straight to a file in .bench/logs/ (to explain errors seen
  // under load): through a pipe, this process, which also generates the load, would spend CPU
  // reading the server's log lines, and the server would seem slower by as much.
  mkdirSync(`${ROOT}.bench/logs`, { recursive: true });
  const logFile = `${ROOT}.bench/logs/${basename(script, ".ts")}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}.log`;
  const fd = openSync(logFile, "a");
  const child = spawn(
    process.execPath,
    [...nodeArgs, ...imports.flatMap((file) => ["--import", file]), script, ...args],
    {
      cwd: ROOT,
      env,
      stdio: ipc ? ["ignore", fd, fd, "ipc"] : ["ignore", fd, fd],
    },
  );
  closeSync(fd);
  running.add(child);
  if (child.pid !== undefined) pinServer(child.pid);
  const stop = async () => {
    running.delete(child);
    await terminate(child);
  };
  const output = () => readFileSync(logFile, "utf8").split("\n");
  try {
    const info = await new Promise<T>((resolve, reject) => {
      const deadline = Date.now() + timeoutMs;
      const poll = setInterval(() => {
        for (const line of output()) {
          const found = ready(line);
          if (found !== undefined) {
            clearInterval(poll);
            return resolve(found);
          }
        }
        if (Date.now() > deadline) {
          clearInterval(poll);
          reject(new Error(`${script} did not become ready within ${timeoutMs} ms`));
        }
      }, 50);
      child.once("exit", (code, signal) => {
        clearInterval(poll);
        reject(new Error(`${script} exited (${code ?? signal}) before it was ready`));
      });
    });
    return { process: child, pid: child.pid!, stop, info };
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${output().slice(-20).join("\n")}`);
  }
}

/** The `{"port":N}` line the bench servers print when they listen. */
export function announcedPort(line: string): number | undefined {
  if (!line.startsWith("{")) return undefined;
  const port = (JSON.parse(line) as { port?: unknown }).port;
  return typeof port === "number" ? port : undefined;
}
