import { randomBytes } from "node:crypto";
import { loadConfig } from "../../server/config.ts";
import { createRuntime, openConfiguredDatabase } from "../../server/runtime.ts";
import type { Database } from "../../server/store/database.ts";
import { type Operation, OPERATIONS } from "./operations.ts";
import { sendOnce } from "./send-once.ts";
import { createdIds, type Recording, recordingDatabase } from "./statement-recorder.ts";
import type { RealServer } from "./targets.ts";
import { prepareTenant } from "./tenant.ts";

export interface OperationRecording {
  operation: Operation;
  recording: Recording;
  /** The ids the recording creates, given fresh values on every replay. */
  created: string[];
  /** HTTP requests one replay stands for (create-then-end: 2). */
  requests: number;
}

/**
 * The statements the real server runs for one request of each benchmarked operation, recorded
 * from the server itself (the same runtime, in this process, on the engine DATABASE_URL names),
 * and the database they ran on, left open for replays.
 */
export async function recordEveryOperation(): Promise<{ db: Database; recordings: OperationRecording[] }> {
  const config = loadConfig({
    ...process.env,
    PORT: "0",
    ADMIN_TOKEN: randomBytes(24).toString("hex"),
    LOG_LEVEL: "warn",
  });
  const db = await openConfiguredDatabase(config);
  const recorder = recordingDatabase(db);
  const runtime = await createRuntime(config, { db: recorder, background: false });
  const { port } = await runtime.start({ port: 0, host: "127.0.0.1" });
  const server = { url: `http://127.0.0.1:${port}`, prefix: "/api/v1", adminToken: config.adminToken! } as RealServer;
  const tenant = await prepareTenant(server);
  const recordings: OperationRecording[] = [];
  for (const operation of OPERATIONS) {
    recorder.start();
    await sendOnce(server, tenant, operation);
    const recording = recorder.stop();
    recordings.push({
      operation,
      recording,
      created: createdIds(recording.steps),
      requests: operation.requests(server, tenant).length,
    });
  }
  await runtime.stop();
  return { db, recordings };
}
