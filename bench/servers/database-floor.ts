import { randomBytes } from "node:crypto";
import { loadConfig } from "../../server/config.ts";
import { createRuntime, openConfiguredDatabase } from "../../server/runtime.ts";
import type { Database } from "../../server/store/database.ts";
import { OPERATIONS } from "../lib/operations.ts";
import { createdIds, type Recording, recordingDatabase, replay } from "../lib/statement-recorder.ts";
import type { RealServer } from "../lib/targets.ts";
import { prepareTenant } from "../lib/tenant.ts";

/**
 * The database floor of each benchmarked operation: the statements the real server runs for one
 * request of it, recorded from the server itself (the same runtime, in this process, on the
 * engine DATABASE_URL names), then replayed from a bare loop with no HTTP, for `duration` seconds
 * after `warmup`. Half of the time one loop replays, half `connections` loops at once (as many
 * requests as the load generator keeps in flight), and the floor is the better of the two: with no
 * HTTP work between statements, concurrent replays of a write contend for the same rows all the
 * time (the brand's), which the server's requests do for a fraction of theirs. Prints one JSON line
 * per operation: {"floor": {operation, rps, statements, failed, concurrency}}.
 *
 * argv: <duration seconds> <warmup seconds> <connections>
 */
const [duration, warmup, connections] = process.argv.slice(2, 5).map(Number) as [number, number, number];
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

/** Sends the operation's requests once, as the load generator would, and keeps what the database was asked. */
async function record(operation: (typeof OPERATIONS)[number]): Promise<Recording> {
  recorder.start();
  const context: Record<string, unknown> = {};
  for (const template of operation.requests(server, tenant)) {
    const request = (template.setupRequest ? template.setupRequest(template, context) : template) ?? template;
    const response = await fetch(`${server.url}${request.path}`, {
      method: request.method,
      headers: request.headers as Record<string, string>,
      body: request.body as string | undefined,
    });
    const body = await response.text();
    if (!response.ok) throw new Error(`${request.method} ${request.path} answered ${response.status}: ${body}`);
    template.onResponse?.(response.status, body, context);
  }
  return recorder.stop();
}

const recordings = [];
for (const operation of OPERATIONS) recordings.push({ operation, recording: await record(operation) });
await runtime.stop();

async function loop(
  target: Database,
  recording: Recording,
  created: string[],
  until: number,
  count: { done: number; failed: number },
): Promise<void> {
  while (Date.now() < until) {
    try {
      await replay(target, recording, created);
      count.done++;
    } catch {
      count.failed++;
    }
  }
}

for (const { operation, recording } of recordings) {
  const { steps } = recording;
  const created = createdIds(steps);
  const requests = operation.requests(server, tenant).length;
  const measure = async (seconds: number, concurrency: number) => {
    const count = { done: 0, failed: 0 };
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, () => loop(db, recording, created, Date.now() + seconds * 1000, count)),
    );
    return { rps: (count.done * requests * 1000) / (performance.now() - started), failed: count.failed, concurrency };
  };
  await measure(warmup, connections);
  const runs = [await measure(duration / 2, 1), await measure(duration / 2, connections)];
  const best = runs.reduce((a, b) => (b.rps > a.rps ? b : a));
  const statements = steps.reduce((sum, step) => sum + ("transaction" in step ? step.transaction.length + 2 : 1), 0);
  const failed = runs.reduce((sum, run) => sum + run.failed, 0);
  console.log(
    JSON.stringify({
      floor: { operation: operation.id, rps: best.rps, concurrency: best.concurrency, statements, failed },
    }),
  );
}

await db.close();
console.log(JSON.stringify({ done: true }));
