import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import { basename } from "node:path";
import { terminate } from "../../mock/prism.ts";
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
 * Starts `node [nodeArgs] --import tsx [--import file…] script args` (Node itself, not the tsx CLI, so the PID is
 * the server's and --cpu-prof/--expose-gc apply to it) and resolves with what `ready` extracts
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
  }: { args?: string[]; nodeArgs?: string[]; imports?: string[]; env?: NodeJS.ProcessEnv; ipc?: boolean; ready: (line: string) => T | undefined; timeoutMs?: number },
): Promise<Child & { info: T }> {
  const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", ...imports.flatMap((file) => ["--import", file]), script, ...args], {
    cwd: ROOT,
    env,
    stdio: ipc ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  // Everything the child prints is kept in .bench/logs/, to explain errors seen under load.
  mkdirSync(`${ROOT}.bench/logs`, { recursive: true });
  const log = createWriteStream(`${ROOT}.bench/logs/${basename(script, ".ts")}-${child.pid}.log`);
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  const stop = async () => {
    running.delete(child);
    await terminate(child);
  };
  const output: string[] = [];
  try {
    const info = await new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${script} did not become ready within ${timeoutMs} ms`)), timeoutMs);
      let buffered = "";
      child.stdout!.on("data", (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split("\n");
        buffered = lines.pop()!;
        for (const line of lines) {
          output.push(line);
          const found = ready(line);
          if (found !== undefined) {
            clearTimeout(timer);
            resolve(found);
          }
        }
      });
      child.stderr!.on("data", (chunk: Buffer) => output.push(chunk.toString()));
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${script} exited (${code ?? signal}) before it was ready`));
      });
    });
    return { process: child, pid: child.pid!, stop, info };
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${output.slice(-20).join("\n")}`);
  }
}

/** The `{"port":N}` line the bench servers print when they listen. */
export function announcedPort(line: string): number | undefined {
  if (!line.startsWith("{")) return undefined;
  const port = (JSON.parse(line) as { port?: unknown }).port;
  return typeof port === "number" ? port : undefined;
}
