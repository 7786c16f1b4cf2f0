import type { Database } from "../../server/store/database.ts";
import { recordEveryOperation } from "../lib/recordings.ts";
import { type Recording, replay } from "../lib/statement-recorder.ts";

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
const { db, recordings } = await recordEveryOperation();

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

for (const { operation, recording, created, requests } of recordings) {
  const { steps } = recording;
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
