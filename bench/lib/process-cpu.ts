import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a process has used, from /proc/PID/stat. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  // utime and stime are fields 14 and 15 of /proc/PID/stat; after "pid (comm) " they are at 11 and 12.
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/**
 * CPU seconds a process has run, to the nanosecond: the sum of its threads' time on a CPU from
 * /proc/PID/task/TID/schedstat. /proc/PID/stat counts in ticks of 10 ms, which is 5 % of a
 * batch of 500 requests at 400 µs each; this is what a warm-up's batches are compared on. A
 * thread that ended meanwhile no longer counts, so it serves for long-lived processes (Node's
 * threads are) and falls back to /proc/PID/stat where schedstat is missing.
 */
export function preciseCpuSeconds(pid: number): number {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return cpuSeconds(pid);
  }
  let nanoseconds = 0;
  for (const task of tasks) {
    try {
      nanoseconds += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return nanoseconds / 1e9;
}

/** The summed CPU seconds of several processes; one that ended meanwhile counts nothing. */
export function totalCpuSeconds(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      total += preciseCpuSeconds(pid);
    } catch {
      // A backend that ended meanwhile.
    }
  }
  return total;
}

/** The PostgreSQL server's processes on this machine (its backends included), for their CPU. */
export function postgresPids(): number[] {
  try {
    return execFileSync("pgrep", ["-x", "postgres"], { encoding: "utf8" }).split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * The PostgreSQL backends serving one database (each names it in its process title), so a row
 * counts the CPU of its own database's statements and not that of whatever else the PostgreSQL
 * server is doing meanwhile (other databases' clients, its background processes).
 */
export function backendsOf(database: string): number[] {
  return postgresPids().filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(` ${database} `);
    } catch {
      return false;
    }
  });
}

/** Each process's CPU seconds now, for cpuSince. */
export function cpuSnapshot(pids: number[]): Map<number, number> {
  const snapshot = new Map<number, number>();
  for (const pid of pids) {
    try {
      snapshot.set(pid, preciseCpuSeconds(pid));
    } catch {
      // Ended before it could be read.
    }
  }
  return snapshot;
}

/**
 * CPU seconds the processes of a snapshot used since it was taken, plus all that `started` (the
 * processes running now that the snapshot had not seen: a pool's connection opened meanwhile)
 * used. Only processes still running count: a backend that ended meanwhile would otherwise
 * subtract all it had used before.
 */
export function cpuSince(snapshot: Map<number, number>, running: number[] = []): number {
  let total = 0;
  for (const pid of new Set([...snapshot.keys(), ...running])) {
    try {
      total += preciseCpuSeconds(pid) - (snapshot.get(pid) ?? 0);
    } catch {
      // Ended meanwhile.
    }
  }
  return total;
}
