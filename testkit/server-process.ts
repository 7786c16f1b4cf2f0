import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));

export interface RunningProcess {
  child: ChildProcess;
  /** Everything printed so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in stdout, rejects if the process exits first. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * A command as an operator runs it, in a process of its own. The environment is the test's own
 * minus the database settings and HOST (which tcsh sets to the machine's name), plus `env`.
 */
export function runProcess(
  command: string,
  args: string[],
  env: Record<string, string | undefined> = {},
  { cwd = ROOT }: { cwd?: string } = {},
): RunningProcess {
  const { DATABASE_URL: _url, DATA_DIR: _dir, ADMIN_TOKEN: _token, HOST: _host, ...base } = process.env;
  const child = spawn(command, args, { cwd, env: { ...base, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = once(child, "exit").then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = out.match(pattern);
          if (!match) return false;
          finish();
          resolve(match);
          return true;
        };
        const onExit = () => {
          if (check()) return;
          finish();
          reject(new Error(`exited before printing ${pattern}\nstdout:\n${out}\nstderr:\n${err}`));
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`did not print ${pattern} within ${timeoutMs} ms\nstdout:\n${out}\nstderr:\n${err}`));
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          child.stdout!.off("data", check);
          child.removeListener("exit", onExit);
        };
        if (check()) return;
        child.stdout!.on("data", check);
        child.once("exit", onExit);
      });
    },
  };
}

/**
 * `server/main.ts` as `npm start` runs it (plain node), on a free port; `cwd` is the checkout whose
 * server runs (this one by default; another release's, built in a worktree of its own).
 */
export function runServer(env: Record<string, string | undefined> = {}, cwd = ROOT): RunningProcess {
  return runProcess(process.execPath, ["server/main.ts"], { PORT: "0", ...env }, { cwd });
}

/** Waits for the server's API URL; returns its origin. */
export async function serverOrigin(server: RunningProcess, timeoutMs?: number): Promise<string> {
  const [, origin] = await server.waitFor(/API: {2}(http:\/\/localhost:\d+)\/api\/v1/, timeoutMs);
  return origin!.replace("localhost", "127.0.0.1");
}

/** Stops a process this test started, if it still runs. */
export async function stop(running: RunningProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (running.child.exitCode !== null || running.child.signalCode !== null) return;
  running.child.kill(signal);
  await running.exited;
}
