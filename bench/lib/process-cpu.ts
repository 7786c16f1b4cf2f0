import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a process has used, from /proc/PID/stat. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  // utime and stime are fields 14 and 15 of /proc/PID/stat; after "pid (comm) " they are at 11 and 12.
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** The summed CPU seconds of several processes; one that ended meanwhile counts nothing. */
export function totalCpuSeconds(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      total += cpuSeconds(pid);
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
