/**
 * A fresh copy of this repository in a scratch folder, and commands run in it as an operator
 * runs them, for the tests of the production install and of the Dockerfile.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The repository's files (`git ls-files`, as in a fresh clone, with this checkout's edits), or those `keep` accepts. */
export function repositoryFiles(keep: (path: string) => boolean = () => true): string[] {
  const listed = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" }).split("\0").filter(Boolean);
  // A file deleted in this checkout and not yet committed is still listed.
  return listed.filter((path) => existsSync(join(ROOT, path)) && keep(path));
}

export function copyFiles(paths: readonly string[], from: string, to: string): void {
  for (const path of paths) {
    mkdirSync(dirname(join(to, path)), { recursive: true });
    copyFileSync(join(from, path), join(to, path));
  }
}

/** Every file under `dir` with its size and modification time, but those under `skip` (names relative to dir). */
export function snapshot(dir: string, skip: readonly string[]): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (relative: string) => {
    for (const entry of readdirSync(join(dir, relative), { withFileTypes: true })) {
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (skip.includes(path)) continue;
      if (entry.isDirectory()) walk(path);
      else {
        const stat = lstatSync(join(dir, path));
        files.set(path, `${stat.size} ${stat.mtimeMs}`);
      }
    }
  };
  walk("");
  return files;
}

/** Makes a tree writable again (a test may have made it read-only), so it can be removed. */
export function makeWritable(dir: string): void {
  if (!existsSync(dir)) return;
  const walk = (path: string) => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    chmodSync(path, stat.mode | 0o200);
    if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
}

/**
 * The environment an operator's shell would have: the test's own without the server's settings
 * and without what npm passes to the scripts it runs (npm_*), with this Node first on PATH.
 */
export function operatorEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (
      value === undefined ||
      /^npm_/i.test(name) ||
      ["DATABASE_URL", "DATA_DIR", "ADMIN_TOKEN", "PORT", "HOST", "NODE_ENV", "INIT_CWD"].includes(name)
    )
      continue;
    env[name] = value;
  }
  env.PATH = `${dirname(process.execPath)}:${env.PATH ?? ""}`;
  return { ...env, ...extra };
}

export interface RunAs {
  uid: number;
  gid: number;
}

/** A command line of plain words (no quotes, no shell operators) as its arguments. */
export function words(command: string): string[] {
  if (!/^[\w@./=:,+-]+( [\w@./=:,+-]+)*$/.test(command)) throw new Error(`not a plain command: ${command}`);
  return command.split(" ");
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/** Runs `argv` to its end in `cwd`; resolves with the exit and everything printed (stdout and stderr, interleaved). */
export async function run(
  argv: readonly string[],
  options: { cwd: string; env: Record<string, string>; as?: RunAs | undefined },
): Promise<Finished> {
  const child = start(argv, options);
  const [code, signal] = (await once(child.process, "exit")) as [number | null, NodeJS.Signals | null];
  return { code, signal, output: child.output() };
}

export interface Started {
  process: ChildProcess;
  output(): string;
}

export function start(
  argv: readonly string[],
  { cwd, env, as }: { cwd: string; env: Record<string, string>; as?: RunAs | undefined },
): Started {
  const [command, ...args] = argv;
  const child = spawn(command!, args, {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    ...(as ? { uid: as.uid, gid: as.gid } : {}),
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return { process: child, output: () => output };
}

/** Resolves once `/readyz` answers 200; rejects when the process exits first or after `timeoutMs`. */
export async function untilReady(server: Started, timeoutMs = 120_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.process.exitCode !== null || server.process.signalCode !== null) break;
    const origin = /API: {2}http:\/\/localhost:(\d+)\/api\/v1/.exec(server.output())?.[1];
    if (origin) {
      const response = await fetch(`http://127.0.0.1:${origin}/readyz`).catch(() => undefined);
      if (response?.status === 200) return `http://127.0.0.1:${origin}`;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the server did not get ready:\n${server.output()}`);
}

/** Whether `path` exists and is a directory. */
export function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}
