import { startNode } from "./children.ts";
import type { OperationId } from "./operations.ts";

export interface Floor {
  operation: OperationId;
  /** Requests per second the database alone answers: the statements of each request, replayed with no HTTP. */
  rps: number;
  /** Statements per request (cycle: per create and end), transactions' BEGIN and COMMIT included. */
  statements: number;
  /** Replays at once that gave it: 1 or the benchmark's connections. */
  concurrency: number;
  /** Replays that failed (should be 0: a replay that fails measures nothing). */
  failed: number;
}

/**
 * The database floor of every benchmarked operation on one engine (bench/servers/database-floor.ts),
 * in a process of its own on the servers' cores.
 */
export async function measureFloors({
  databaseUrl,
  duration,
  warmup,
  connections,
}: {
  databaseUrl: string;
  duration: number;
  warmup: number;
  connections: number;
}): Promise<Map<OperationId, Floor>> {
  const floors = new Map<OperationId, Floor>();
  const child = await startNode("bench/servers/database-floor.ts", {
    args: [String(duration), String(warmup), String(connections)],
    env: { ...process.env, DATABASE_URL: databaseUrl },
    timeoutMs: 60_000 + 8 * (duration + warmup) * 1000,
    ready: (line) => {
      if (!line.startsWith("{")) return undefined;
      const parsed = JSON.parse(line) as { floor?: Floor; done?: boolean };
      if (parsed.floor) floors.set(parsed.floor.operation, parsed.floor);
      return parsed.done ? true : undefined;
    },
  });
  await child.stop();
  return floors;
}

/**
 * What a server that adds the framework's work to the database's could reach at best, when both
 * run on the same cores one after the other: 1 / (1/framework + 1/floor).
 */
export function compositeCeiling(frameworkRps: number, floorRps: number): number {
  return 1 / (1 / frameworkRps + 1 / floorRps);
}
