import { execFileSync } from "node:child_process";
import { availableParallelism } from "node:os";

/**
 * Which cores the benchmark's processes run on. The load generator (autocannon, in the
 * benchmark's own process) and the server under test share the machine; left to the scheduler,
 * they meet on the same core in some rounds and not in others, which moves every row by 10–20 %
 * from one run to the next and blurs the ratios between targets. With `taskset` (util-linux) and
 * at least two cores, the generator keeps the first core and every server started afterwards the
 * others, so each server is measured on cores of its own and the targets compare like for like.
 * PostgreSQL's processes are not moved: on PostgreSQL rows its backends share the cores with both.
 */
interface CorePlan {
  generator: string;
  servers: string;
}

let plan: CorePlan | null = null;

function tasksetAvailable(): boolean {
  try {
    execFileSync("taskset", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Pins this process (the load generator) to the first core; returns a line saying what was done, for the report. */
export function separateGeneratorFromServers(): string {
  const cores = availableParallelism();
  if (cores < 2) return "one core: the load generator and the servers share it";
  if (!tasksetAvailable())
    return "taskset not found: the load generator and the servers share the cores as the scheduler decides";
  plan = { generator: "0", servers: cores === 2 ? "1" : `1-${cores - 1}` };
  pin(process.pid, plan.generator);
  return `load generator on core ${plan.generator}, each server on core${cores === 2 ? "" : "s"} ${plan.servers}`;
}

/** Moves a server's process (every thread it has; later ones inherit) to the servers' cores, when the generator was given its own. */
export function pinServer(pid: number): void {
  if (plan) pin(pid, plan.servers);
}

function pin(pid: number, cores: string): void {
  execFileSync("taskset", ["--all-tasks", "--cpu-list", "--pid", cores, String(pid)], { stdio: "ignore" });
}
