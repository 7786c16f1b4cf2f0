import { Worker } from "node:worker_threads";
import { PGlite, type PGliteInterface } from "@electric-sql/pglite";
import { PGliteWorker } from "@electric-sql/pglite/worker";
import { parseArgs } from "node:util";
import { embeddedOptions } from "../server/store/embedded-settings.ts";
import { median } from "./lib/paired.ts";

/**
 * PGlite in its own thread (@electric-sql/pglite's PGliteWorker, bench/servers/pglite-worker-thread.ts)
 * beside PGlite in the calling thread, on the reads the server makes most: one stream by id and a
 * page of 20. For each, in rounds taken in turn: the CPU the calling thread spends per statement
 * (what a request's event loop pays: in-thread, the engine itself; with the worker, the messages
 * and the rows' copies) and the whole process's CPU per statement (both threads), and the
 * statements per second at 10 at once. Standalone: the server is not changed.
 *
 *   node bench/pglite-worker.ts [--statements 2000] [--rounds 6]
 */
const { values: flags } = parseArgs({
  options: { statements: { type: "string", default: "2000" }, rounds: { type: "string", default: "6" } },
});
const statements = Number(flags.statements);
const rounds = Number(flags.rounds);

/** CPU seconds of this process's main thread (its thread id is the process id). */
function mainThreadSeconds(): number {
  const { readFileSync } = process.getBuiltinModule("node:fs");
  return Number(readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, "utf8").split(" ")[0]) / 1e9;
}
function processSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

const SCHEMA = `
  CREATE TABLE streams (id uuid PRIMARY KEY, brand_id uuid NOT NULL, status text NOT NULL,
    product_name text NOT NULL, platform text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),
    payload jsonb NOT NULL DEFAULT '{}');
  CREATE INDEX streams_brand ON streams (brand_id, created_at DESC, id DESC);`;
const BRAND = "00000000-0000-4000-8000-000000000001";

async function prepare(db: PGliteInterface): Promise<string[]> {
  await db.exec(SCHEMA);
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) {
    const id = crypto.randomUUID();
    ids.push(id);
    await db.query(
      "INSERT INTO streams (id, brand_id, status, product_name, platform, payload) VALUES ($1, $2, 'live', 'Benchmark sneakers drop', 'youtube', $3)",
      [id, BRAND, JSON.stringify({ agent: { id: crypto.randomUUID(), joined_at: new Date().toISOString() } })],
    );
  }
  return ids;
}

const READS = {
  "one stream": (db: PGliteInterface, ids: string[], i: number) =>
    db.query("SELECT * FROM streams WHERE id = $1 AND brand_id = $2", [ids[i % ids.length], BRAND]),
  "page of 20": (db: PGliteInterface) =>
    db.query("SELECT * FROM streams WHERE brand_id = $1 ORDER BY created_at DESC, id DESC LIMIT 20", [BRAND]),
} as const;

async function measure(db: PGliteInterface, ids: string[], read: keyof typeof READS) {
  let next = 0;
  const mainBefore = mainThreadSeconds();
  const processBefore = processSeconds();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < statements) await READS[read](db, ids, next++);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    main: ((mainThreadSeconds() - mainBefore) / statements) * 1e6,
    process: ((processSeconds() - processBefore) / statements) * 1e6,
    perSecond: statements / seconds,
  };
}

const inThread = await PGlite.create(embeddedOptions());
const thread = new Worker(new URL("./servers/pglite-worker-thread.ts", import.meta.url));
// PGliteWorker expects a Web Worker: addEventListener with events carrying `data`.
const webWorker = {
  postMessage: (message: unknown) => thread.postMessage(message),
  addEventListener: (type: string, listener: (event: { data: unknown }) => void, options?: { once?: boolean }) => {
    const wrapped = (data: unknown) => listener({ data });
    listeners.set(listener, wrapped);
    if (options?.once) thread.once(type, wrapped);
    else thread.on(type, wrapped);
  },
  removeEventListener: (type: string, listener: (event: { data: unknown }) => void) => {
    const wrapped = listeners.get(listener);
    if (wrapped) thread.off(type, wrapped);
  },
  terminate: () => thread.terminate(),
};
const listeners = new Map<unknown, (data: unknown) => void>();
const inWorker = await PGliteWorker.create(webWorker as unknown as globalThis.Worker);
const engines = [
  { label: "in-thread", db: inThread as PGliteInterface, ids: await prepare(inThread) },
  { label: "worker", db: inWorker as PGliteInterface, ids: await prepare(inWorker) },
];

console.log(
  `PGlite in the calling thread and in a worker thread: ${statements} statements × ${rounds} rounds, 10 at once; µs of CPU per statement`,
);
for (const read of Object.keys(READS) as Array<keyof typeof READS>) {
  const samples = new Map(engines.map((engine) => [engine.label, [] as Array<Awaited<ReturnType<typeof measure>>>]));
  for (const engine of engines) await measure(engine.db, engine.ids, read); // warm-up
  for (let round = 0; round < rounds; round++) {
    for (const engine of round % 2 === 0 ? engines : [...engines].reverse())
      samples.get(engine.label)!.push(await measure(engine.db, engine.ids, read));
  }
  console.log(`\n${read}`);
  for (const [label, runs] of samples)
    console.log(
      `  ${label.padEnd(10)} calling thread ${median(runs.map((r) => r.main))
        .toFixed(1)
        .padStart(6)}   whole process ${median(runs.map((r) => r.process))
        .toFixed(1)
        .padStart(6)}   ${median(runs.map((r) => r.perSecond))
        .toFixed(0)
        .padStart(6)} statements/s`,
    );
}
await inWorker.close();
await inThread.close();
