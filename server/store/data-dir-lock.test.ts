import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { LOCK_FILE } from "./data-dir-lock.ts";

// Each contender runs in a thread of its own and, like a server, stays up once it holds the lock
// (a thread that exited would release it and let the other in, which is correct).
const CONTENDER = `
const { workerData, parentPort } = require("node:worker_threads");
(async () => {
  const { tsImport } = await import(workerData.tsx);
  const { lockDataDir } = await tsImport(workerData.lockModule, workerData.lockModule);
  const go = new Int32Array(workerData.go);
  parentPort.postMessage("ready");
  while (Atomics.load(go, 0) === 0);
  try {
    lockDataDir(workerData.dir, { pid: workerData.pid });
    parentPort.postMessage("held");
  } catch (error) {
    parentPort.postMessage(error.name);
  }
  setInterval(() => undefined, 1_000);
})();
`;

async function race(dir: string, pids: number[]): Promise<string[]> {
  const go = new SharedArrayBuffer(4);
  const workerData = { dir, go, tsx: import.meta.resolve("tsx/esm/api"), lockModule: new URL("./data-dir-lock.ts", import.meta.url).href };
  const workers = pids.map((pid) => new Worker(CONTENDER, { eval: true, workerData: { ...workerData, pid } }));
  try {
    const next = () => workers.map((worker) => new Promise<string>((resolve) => worker.once("message", resolve)));
    await Promise.all(next());
    const outcomes = next();
    Atomics.store(new Int32Array(go), 0, 1);
    return await Promise.all(outcomes);
  } finally {
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
}

describe("the data-directory lock", () => {
  it("lets exactly one of two starts take over a stale lock at the same moment", async () => {
    let bothHeld = 0;
    for (let trial = 0; trial < 40; trial++) {
      const dir = mkdtempSync(join(tmpdir(), "lsh-lock-race-"));
      // Left by a process that is gone.
      writeFileSync(join(dir, LOCK_FILE), `${JSON.stringify({ pid: 2 ** 22 + 7, host: hostname(), started_at: "2026-11-24T00:00:00.000Z" })}\n`);
      const outcomes = await race(dir, [process.pid, 1]);
      rmSync(dir, { recursive: true, force: true });
      expect(outcomes.filter((outcome) => outcome === "held").length).toBeGreaterThanOrEqual(1);
      if (outcomes.every((outcome) => outcome === "held")) bothHeld++;
    }
    expect(bothHeld).toBe(0);
  }, 120_000);
});
