import { lstatSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import lockfile from "proper-lockfile";

/** The lock (a directory, created atomically by mkdir) inside the embedded database's directory. */
export const LOCK_FILE = "server.lock";
/** Who holds the lock, for the refusal message; proper-lockfile's lock directory must stay empty. */
export const HOLDER_FILE = "server.lock.json";

/** The holder refreshes the lock's mtime this often; one untouched for STALE_MS is taken over. */
export const UPDATE_MS = 2_000;
export const STALE_MS = 10_000;
/** A lock file of 1.1.0 still empty after this was left by a start killed while writing it. */
const LEGACY_UNWRITTEN_GRACE_MS = 2_000;
/** A start waits this long for a lock left by a killed process to go stale, then gives up. */
const RETRIES = { retries: 12, factor: 1, minTimeout: 1_000, maxTimeout: 1_000 };

interface Holder {
  pid: number | string;
  host: string;
  started_at: string;
}

/** Another live process holds the data directory. */
export class DataDirLockedError extends Error {
  override name = "DataDirLockedError";
  readonly dir: string;
  readonly holder: Holder;
  /** Held by the lock file of release 1.1.0 or older, which is never taken over by itself. */
  readonly legacy: boolean;
  constructor(dir: string, holder: Holder, legacy = false) {
    super(`${dir} is in use by process ${holder.pid} on ${holder.host}, started ${holder.started_at}`);
    this.dir = dir;
    this.holder = holder;
    this.legacy = legacy;
  }
}

export interface DataDirLock {
  readonly path: string;
  /** Removes the lock if it is still ours. Safe to call twice. */
  release(): void;
}

/** What a lock file says of its holder, parsed; null when it does not parse. */
function parseHolder(text: string): Partial<Holder> | null {
  try {
    return JSON.parse(text) as Partial<Holder>;
  } catch {
    return null;
  }
}

/** The holder as the refusal names it, "unknown" for what the file does not say. */
function namedHolder(holder: Partial<Holder> | null): Holder {
  return {
    pid: holder?.pid ?? "unknown",
    host: String(holder?.host ?? "unknown"),
    started_at: String(holder?.started_at ?? "unknown"),
  };
}

function readHolder(dir: string): Holder {
  try {
    return namedHolder(parseHolder(readFileSync(join(dir, HOLDER_FILE), "utf8")));
  } catch {
    return namedHolder(null);
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
 * Releases up to 1.1.0 locked the directory with a plain file of the same name, holding the
 * holder's pid and host. One left by a server that was killed would stop every later start, so it
 * is judged by that release's rule: its process still running on this host (another server of
 * that release) is respected; a holder on another host cannot be checked and is respected too;
 * any other is stale and removed.
 */
function clearLegacyLock(dir: string, path: string): void {
  let writtenAt: number;
  let text: string;
  try {
    const stat = lstatSync(path);
    if (!stat.isFile()) return;
    writtenAt = stat.mtimeMs;
    text = readFileSync(path, "utf8");
  } catch {
    // Gone, or turned into a directory: another start got there first; the lock decides.
    return;
  }
  const holder = parseHolder(text);
  const named = namedHolder(holder);
  // Unreadable: being written by a start of that release (1.1.0 gave it 2 s), or left by one
  // killed at that moment.
  if (holder === null && Date.now() - writtenAt < LEGACY_UNWRITTEN_GRACE_MS)
    throw new DataDirLockedError(dir, named, true);
  const pid = Number(holder?.pid);
  const ours = holder?.host === hostname();
  if ((ours && Number.isInteger(pid) && pid !== process.pid && isRunning(pid)) || (holder?.host && !ours))
    throw new DataDirLockedError(dir, named, true);
  try {
    rmSync(path);
  } catch {
    // Removed, or replaced by a lock directory, by another start meanwhile: the lock decides.
  }
}

/**
 * PGlite is one process's database: a second process opening the same directory would corrupt
 * it. proper-lockfile holds `server.lock` and touches it every UPDATE_MS; a lock untouched for
 * STALE_MS (its process was killed, the machine restarted) is taken over, so a start waits up to
 * about 12 s for one before refusing. This works across hosts and containers sharing a volume.
 */
export async function lockDataDir(
  dir: string,
  {
    onCompromised = (error: Error) => console.error(`DATA_DIR ${dir}: ${error.message}`),
    retries = RETRIES as number | typeof RETRIES,
  } = {},
): Promise<DataDirLock> {
  const path = join(dir, LOCK_FILE);
  clearLegacyLock(dir, path);
  try {
    await lockfile.lock(dir, {
      lockfilePath: path,
      realpath: false,
      stale: STALE_MS,
      update: UPDATE_MS,
      retries,
      // The library's default throws from a timer and ends the process; the server keeps serving.
      onCompromised,
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOCKED") throw new DataDirLockedError(dir, readHolder(dir));
    throw error;
  }
  const holder: Holder = { pid: process.pid, host: hostname(), started_at: new Date().toISOString() };
  writeFileSync(join(dir, HOLDER_FILE), `${JSON.stringify(holder)}\n`);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    rmSync(join(dir, HOLDER_FILE), { force: true });
    try {
      lockfile.unlockSync(dir, { lockfilePath: path, realpath: false });
    } catch {
      // Already gone or compromised: nothing to release.
    }
  };
  return { path, release };
}
