import { recordEveryOperation } from "../lib/recordings.ts";
import { replay } from "../lib/statement-recorder.ts";

/**
 * The database floor, measured in turn with the servers (bench/cpu.ts): the statements the real
 * server runs for one request of each operation (bench/lib/recordings.ts), replayed with no HTTP
 * on demand. The parent asks over IPC for an operation's replays, `concurrency` at once,
 * and reads this process's CPU (and PostgreSQL's) from /proc around the answer, so the floor's CPU
 * is measured directly rather than derived from its replays per second.
 *
 * IPC in:  {operation, requests, concurrency}: replays for that many HTTP requests' worth
 * Prints {"ready":true} once recorded; IPC out: {done, failed} after each batch.
 */
const { recordings } = await recordEveryOperation().then(({ db, recordings }) => ({
  recordings: new Map(recordings.map((one) => [one.operation.id, { db, ...one }])),
}));

process.on("message", async (message: { operation: string; requests: number; concurrency: number }) => {
  const entry = recordings.get(message.operation as never);
  if (!entry) {
    process.send!({ error: `no recording of ${message.operation}` });
    return;
  }
  // Create-then-end replays two requests' statements at once.
  const count = Math.max(1, Math.round(message.requests / entry.requests));
  let next = 0;
  let failed = 0;
  const loop = async () => {
    while (next < count) {
      next++;
      await replay(entry.db, entry.recording, entry.created).catch(() => failed++);
    }
  };
  await Promise.all(Array.from({ length: message.concurrency }, loop));
  process.send!({ done: count, failed });
});
console.log(JSON.stringify({ ready: true }));
process.once("SIGTERM", () => process.exit(0));
