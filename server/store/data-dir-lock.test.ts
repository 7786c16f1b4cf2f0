import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import lockfile from "proper-lockfile";
import { afterEach, describe, expect, it } from "vitest";
import { describeStartupError } from "../startup-errors.ts";
import { DataDirLockedError, HOLDER_FILE, LOCK_FILE, lockDataDir, STALE_MS } from "./data-dir-lock.ts";

const dirs: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), "lsh-lock-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the data-directory lock", () => {
  it("refuses a second holder, naming the first; released, it can be taken again", async () => {
    const dir = scratch();
    const lock = await lockDataDir(dir);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
    const error = await lockDataDir(dir, { retries: 0 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DataDirLockedError);
    expect((error as DataDirLockedError).holder).toMatchObject({ pid: process.pid });
    lock.release();
    lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    expect(existsSync(join(dir, HOLDER_FILE))).toBe(false);
    (await lockDataDir(dir, { retries: 0 })).release();
  });

  it("lets exactly one of several starts at the same moment hold it", async () => {
    const dir = scratch();
    const outcomes = await Promise.allSettled([1, 2, 3, 4].map(() => lockDataDir(dir, { retries: 0 })));
    const held = outcomes.filter((outcome) => outcome.status === "fulfilled");
    expect(held).toHaveLength(1);
    held[0]!.value.release();
  });

  it("takes over a lock its holder stopped touching (killed) once it is stale", async () => {
    const dir = scratch();
    // What a process killed with SIGKILL leaves: the lock, no longer refreshed.
    await lockfile.lock(dir, {
      lockfilePath: join(dir, LOCK_FILE),
      realpath: false,
      update: 60_000,
      stale: 120_000,
      onCompromised: () => undefined,
    });
    await expect(lockDataDir(dir, { retries: 0 })).rejects.toBeInstanceOf(DataDirLockedError);
    const old = new Date(Date.now() - STALE_MS - 1_000);
    utimesSync(join(dir, LOCK_FILE), old, old);
    const lock = await lockDataDir(dir, { retries: 0 });
    expect(JSON.parse(readFileSync(join(dir, HOLDER_FILE), "utf8"))).toMatchObject({ pid: process.pid });
    lock.release();
  });
});

describe("the lock file of release 1.1.0 and older (a plain file of the same name)", () => {
  const legacyLock = (dir: string, holder: object) =>
    writeFileSync(join(dir, LOCK_FILE), `${JSON.stringify({ started_at: "2026-11-25T21:06:21.293Z", ...holder })}\n`);

  it("is removed when its process is gone, and the lock is taken", async () => {
    const dir = scratch();
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid;
    legacyLock(dir, { pid: gone, host: hostname() });
    const lock = await lockDataDir(dir, { retries: 0 });
    expect(JSON.parse(readFileSync(join(dir, HOLDER_FILE), "utf8"))).toMatchObject({ pid: process.pid });
    lock.release();
  });

  it("is removed when unreadable and older than 2 s (a start killed while writing it), respected before", async () => {
    const dir = scratch();
    writeFileSync(join(dir, LOCK_FILE), "");
    await expect(lockDataDir(dir, { retries: 0 })).rejects.toMatchObject({ legacy: true });
    const old = new Date(Date.now() - 3_000);
    utimesSync(join(dir, LOCK_FILE), old, old);
    (await lockDataDir(dir, { retries: 0 })).release();
  });

  it("is respected while its process runs on this host, or when it names another host", async () => {
    const dir = scratch();
    const running = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"]);
    try {
      legacyLock(dir, { pid: running.pid, host: hostname() });
      const error = await lockDataDir(dir, { retries: 0 }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DataDirLockedError);
      expect(error).toMatchObject({ legacy: true, holder: { pid: running.pid } });
    } finally {
      running.kill();
    }
    legacyLock(dir, { pid: 1, host: "another-host" });
    await expect(lockDataDir(dir, { retries: 0 })).rejects.toMatchObject({ legacy: true });
    const refusal = new DataDirLockedError(dir, { pid: 1, host: "another-host", started_at: "t" }, true);
    expect(describeStartupError(refusal, undefined)).toContain(`delete ${dir}/server.lock`);
  });
});
