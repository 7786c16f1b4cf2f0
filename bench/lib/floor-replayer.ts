import { startNode } from "./children.ts";
import type { OperationId } from "./operations.ts";

export interface FloorReplayer {
  pid: number;
  /** Replays an operation's statements for `requests` HTTP requests' worth, `concurrency` at once; resolves with the replays that failed. */
  replay(operation: OperationId, requests: number, concurrency: number): Promise<number>;
  stop(): Promise<void>;
}

/** Starts bench/servers/floor-replayer.ts on the engine `databaseUrl` names, once it has recorded every operation. */
export async function startFloorReplayer(databaseUrl: string): Promise<FloorReplayer> {
  const child = await startNode("bench/servers/floor-replayer.ts", {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    ipc: true,
    ready: (line) => (line === '{"ready":true}' ? true : undefined),
  });
  return {
    pid: child.pid,
    stop: child.stop,
    replay: (operation, requests, concurrency) =>
      new Promise((resolve, reject) => {
        child.process.once("message", (answer: { failed?: number; error?: string }) =>
          answer.error ? reject(new Error(answer.error)) : resolve(answer.failed ?? 0),
        );
        child.process.send({ operation, requests, concurrency });
      }),
  };
}
