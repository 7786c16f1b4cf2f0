import { readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
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
  readonly dir: string;
  readonly holder: Holder;
  constructor(dir: string, holder: Holder) {
    super(`${dir} is in use by process ${holder.pid} on ${holder.host}, started ${holder.started_at}`);
    this.dir = dir;
    this.holder = holder;
  }
}

export interface DataDirLock {
  readonly path: string;
  /** Removes the lock file if it is still ours. Safe to call twice. */
  release(): void;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

function parseHolder(text: string): Holder | null {
  try {
    const holder = JSON.parse(text) as Partial<Holder>;
    if (!Number.isInteger(holder.pid) || typeof holder.host !== "string") return null;
    return { pid: holder.pid!, host: holder.host, started_at: String(holder.started_at) };
  } catch {
    return null;
  }
}

/** A lock file still empty after this was left by a start killed while writing it. */
const UNWRITTEN_GRACE_MS = 2_000;

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** Start-up is synchronous here; a short blocking wait while another start finishes. */
function pause(): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
}

/** How often a start retries after losing a takeover to another start. */
const TAKEOVER_TRIES = 50;
/** A takeover file older than this was left by a process killed in the middle of one. */
const TAKEOVER_STALE_MS = 10_000;

/**
 * Removes the stale lock `seen`, under a second lock (`server.lock.takeover`, created with `wx`):
 * two starts that both found the same stale lock would otherwise each remove it, the second one
 * removing the first one's fresh lock, and both open the database. Under the takeover lock the
 * file is removed only if it is still the stale one; whoever loses waits a moment and looks again.
 */
function takeOver(path: string, seen: string | null): void {
  const mutex = `${path}.takeover`;
  try {
    writeFileSync(mutex, String(process.pid), { flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    try {
      if (ageMs(mutex) > TAKEOVER_STALE_MS) unlinkSync(mutex);
    } catch {
      // Gone already: the other start finished.
    }
    pause();
    return;
  }
  try {
    if (readText(path) === seen) unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  } finally {
    unlinkSync(mutex);
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
 * a lock naming our own pid was written by a process that is gone. (So two containers sharing
 * one data directory and one host name cannot see each other: never share it; docs/operators.md.)
 */
export function lockDataDir(dir: string, { pid = process.pid, host = hostname(), now = new Date() } = {}): DataDirLock {
  const path = join(dir, LOCK_FILE);
  const content = JSON.stringify({ pid, host, started_at: now.toISOString() } satisfies Holder);
  for (let tries = 0; ; tries++) {
    try {
      writeFileSync(path, `${content}\n`, { flag: "wx" });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || tries >= TAKEOVER_TRIES) throw error;
    }
    const seen = readText(path);
    const holder = seen === null ? null : parseHolder(seen);
    // Unreadable: another start between creating and writing it (give it a moment), or one
    // killed right then (stale).
    if (holder === null && seen !== null && ageMs(path) < UNWRITTEN_GRACE_MS) {
      pause();
      continue;
    }
    const stale = holder === null || (holder.host === host && (holder.pid === pid || !isRunning(holder.pid)));
    if (!stale) throw new DataDirLockedError(dir, holder);
    takeOver(path, seen);
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
