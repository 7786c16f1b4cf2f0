import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";

/** The lock file inside the embedded database's directory. */
export const LOCK_FILE = "server.lock";

interface Holder {
  pid: number;
  host: string;
  started_at: string;
}

/** Another live process holds the data directory. */
export class DataDirLockedError extends Error {
  override name = "DataDirLockedError";
  constructor(
    readonly dir: string,
    readonly holder: Holder,
  ) {
    super(`${dir} is in use by process ${holder.pid} on ${holder.host}, started ${holder.started_at}`);
  }
}

export interface DataDirLock {
  readonly path: string;
  /** Removes the lock file if it is still ours. Safe to call twice. */
  release(): void;
}

function readHolder(path: string): Holder | null {
  try {
    const holder = JSON.parse(readFileSync(path, "utf8")) as Partial<Holder>;
    if (!Number.isInteger(holder.pid) || typeof holder.host !== "string") return null;
    return { pid: holder.pid!, host: holder.host, started_at: String(holder.started_at) };
  } catch {
    return null;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * PGlite is one process's database: a second process opening the same directory would corrupt
 * it. The lock file is created atomically (`wx`); one whose process is gone (killed with SIGKILL,
 * machine restarted) is stale and taken over. A holder on another host cannot be checked, so it
 * is respected. A container restarted on the same volume often gets the same pid as before:
 * a lock naming our own pid was written by a process that is gone.
 */
export function lockDataDir(dir: string, { pid = process.pid, host = hostname(), now = new Date() } = {}): DataDirLock {
  const path = join(dir, LOCK_FILE);
  const content = JSON.stringify({ pid, host, started_at: now.toISOString() } satisfies Holder);
  for (let tries = 0; ; tries++) {
    try {
      writeFileSync(path, `${content}\n`, { flag: "wx" });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || tries >= 2) throw error;
    }
    const holder = readHolder(path);
    // Unreadable: a process killed between creating and writing the file.
    const stale = holder === null || (holder.host === host && (holder.pid === pid || !isRunning(holder.pid)));
    if (!stale) throw new DataDirLockedError(dir, holder);
    try {
      unlinkSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.removeListener("exit", release);
    try {
      if (readFileSync(path, "utf8").trim() === content) unlinkSync(path);
    } catch {
      // Already gone: nothing to release.
    }
  };
  // process.exit() skips the server's shutdown; the lock still goes.
  process.once("exit", release);
  return { path, release };
}
