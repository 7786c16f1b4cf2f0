import { mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { integerSetting } from "../server/config.ts";
import { scratchPostgresDatabase } from "../testkit/harness.ts";
import { killAll, onInterrupt, ROOT } from "./lib/children.ts";
import { drainTable, fanOutCheckLines, fanOutTable, measureFanOut } from "./lib/fan-out.ts";
import { GROWTH_STREAMS, growthCheckLines, growthTable, measureGrowth } from "./lib/growth.ts";
import { type Run, run, summarise } from "./lib/load.ts";
import { type OperationId, OPERATIONS } from "./lib/operations.ts";
import { checkTargets, machine, type Row, table, targetLines, withFloors, withRatios } from "./lib/report.ts";
import { type Floor, measureFloors } from "./lib/floors.ts";
import { cpuSeconds, postgresPids, totalCpuSeconds } from "./lib/process-cpu.ts";
import { startCeiling, startPrism, startRealServer, type Target } from "./lib/targets.ts";
import { captureResponses, prepareTenant, type Tenant } from "./lib/tenant.ts";
import { separateGeneratorFromServers } from "./lib/cores.ts";
import { checkStartup, cleanUpStartupTargets, measureStartup, startupTable, startupTargets } from "./lib/startup.ts";
import { memoryCheck } from "./memory.ts";
import { byArea, formatHotspots, hotspots } from "./profile.ts";

const USAGE = `npm run bench -- [--duration S] [--warmup S] [--connections N] [--quick] [--memory] [--startup] [--profile] [--out FILE]
  --duration S     seconds measured per row (default 10, or BENCH_DURATION in whole seconds)
  --warmup S       seconds of unmeasured load before each row (default 2)
  --quick          a smoke run: 2 s per row, 0.5 s warm-up
  --memory         the memory check instead: RSS after 10,000 and after 100,000 requests
  --startup        start-up instead: time to ready and RSS of the server (each engine), the mock and Prism
  --runs N         measured starts per target with --startup (default 5)
  --compare DIR    with --startup: the same targets of the checkout in DIR too (e.g. an older
                   commit, with its own npm ci), their starts taken in turn with this checkout's
  --profile        run the real server with --cpu-prof and print its hottest functions
  --out FILE       where the JSON results go (default .bench/latest.json)
  --only KINDS     run only these targets: real,framework,physical,prism (default all);
                   with --startup: server,server-postgres,server-pglite,mock,mock-dynamic,prism (mock: both mocks)
  --skip-floors    leave out the database floors (the statements of each operation replayed with no HTTP;
                   with the framework ceiling they make each real-server row's composite ceiling)
  --skip-growth    leave out the growth rows (a brand of 100,000 streams on each engine, after the others)
  --skip-fanout    leave out the fan-out rows (create-then-end with 1 and 50 webhooks, a 10,000-delivery backlog drained)
  --share-cores    leave the load generator and the servers on every core (default: the generator on the first core, the servers on the others)
DATABASE_URL=postgres://… adds real-server rows on PostgreSQL (in a scratch database, dropped afterwards).`;

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string" },
    warmup: { type: "string" },
    connections: { type: "string", default: "10" },
    quick: { type: "boolean", default: false },
    memory: { type: "boolean", default: false },
    startup: { type: "boolean", default: false },
    runs: { type: "string", default: "5" },
    compare: { type: "string" },
    profile: { type: "boolean", default: false },
    out: { type: "string" },
    only: { type: "string" },
    "skip-growth": { type: "boolean", default: false },
    "skip-floors": { type: "boolean", default: false },
    "skip-fanout": { type: "boolean", default: false },
    "share-cores": { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});

function seconds(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!(value > 0)) throw new Error(`${name} must be a positive number of seconds, got "${raw}"`);
  return value;
}

const duration = flags.quick
  ? 2
  : flags.duration !== undefined
    ? seconds(flags.duration, 10, "--duration")
    : integerSetting(process.env, "BENCH_DURATION", 10, { min: 1 });
const warmup = flags.quick ? 0.5 : seconds(flags.warmup, 2, "--warmup");
const connections = Number(flags.connections);
const postgresUrl = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : undefined;
const only = new Set((flags.only ?? "real,framework,physical,prism").split(","));
const profileDir = `${ROOT}.bench/profiles`;
const profileArgs = flags.profile ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];

/**
 * Every target is started first; then, operation by operation, each target gets a warm-up and
 * its measured time in rounds taken in turn, so a change in the machine's load while the
 * benchmark runs (other work on a shared machine) weighs on every target alike.
 */
async function measureAll(targets: Array<{ target: Target; tenant: Tenant; postgres?: boolean }>): Promise<Row[]> {
  const rows: Row[] = [];
  const rounds = Math.max(1, Math.round(duration / 2));
  for (const operation of OPERATIONS) {
    const runs = new Map<Target, Run[]>(targets.map(({ target }) => [target, []]));
    // CPU seconds of the target's process (and of PostgreSQL's, for a row on it) over the measured runs.
    const cpu = new Map<Target, { server: number; database: number }>(
      targets.map(({ target }) => [target, { server: 0, database: 0 }]),
    );
    for (const { target, tenant } of targets)
      await run({ url: target.url, requests: operation.requests(target, tenant), connections, duration: warmup });
    for (let round = 0; round < rounds; round++) {
      for (const { target, tenant, postgres } of targets) {
        const databasePids = postgres ? postgresPids() : [];
        const before = { server: cpuSeconds(target.pid), database: totalCpuSeconds(databasePids) };
        runs.get(target)!.push(
          await run({
            url: target.url,
            requests: operation.requests(target, tenant),
            connections,
            duration: duration / rounds,
          }),
        );
        const used = cpu.get(target)!;
        used.server += cpuSeconds(target.pid) - before.server;
        used.database += totalCpuSeconds(databasePids) - before.database;
      }
    }
    for (const { target, postgres } of targets) {
      const result = summarise(runs.get(target)!);
      const used = cpu.get(target)!;
      const perRequest = (seconds: number) => (seconds / result.requests) * 1e6;
      console.log(
        `  ${operation.label.padEnd(28)} ${target.label.padEnd(24)} ${result.rps.toFixed(0).padStart(6)} req/s  p50 ${result.p50.toFixed(2)} ms  p99 ${result.p99.toFixed(2)} ms  CPU ${perRequest(used.server).toFixed(0)} µs/req${postgres ? ` + PostgreSQL ${perRequest(used.database).toFixed(0)}` : ""}${result.non2xx + result.errors ? `  (${result.non2xx} non-2xx, ${result.errors} errors)` : ""}`,
      );
      rows.push({
        ...result,
        operation: operation.id,
        operationLabel: operation.label,
        target: target.kind,
        targetLabel: target.label,
        cpuPerRequestUs: perRequest(used.server),
        ...(postgres ? { databaseCpuPerRequestUs: perRequest(used.database) } : {}),
      });
    }
  }
  return rows;
}

/** The database floors of each engine measured, keyed by the label of its real-server rows. */
async function measureAllFloors(
  postgresDatabaseUrl: string | undefined,
): Promise<Map<string, Map<OperationId, Floor>>> {
  const floors = new Map<string, Map<OperationId, Floor>>();
  const engines: Array<[string, string]> = [["real server (PGlite)", "memory:"]];
  if (postgresDatabaseUrl) engines.push(["real server (PostgreSQL)", postgresDatabaseUrl]);
  for (const [label, databaseUrl] of engines) {
    const measured = await measureFloors({ databaseUrl, duration, warmup, connections });
    floors.set(label, measured);
    for (const floor of measured.values()) {
      console.log(
        `  database floor, ${label.replace("real server ", "")}: ${floor.operation.padEnd(8)} ${floor.rps.toFixed(0).padStart(6)} req/s  ${floor.statements} statements per request, ${floor.concurrency} at once${floor.failed ? `  (${floor.failed} replays failed)` : ""}`,
      );
    }
  }
  return floors;
}

async function throughput(): Promise<void> {
  const started = Date.now();
  const loadBefore = loadavg();
  const cores = flags["share-cores"]
    ? "shared: the load generator and the servers on every core"
    : separateGeneratorFromServers();
  console.log(
    `Benchmark: ${connections} connections, ${duration} s per row (in rounds taken in turn) after ${warmup} s of warm-up; autocannon in this process, each server in its own; cores: ${cores}.`,
  );
  const stops: Array<() => Promise<void>> = [];
  try {
    const targets: Array<{ target: Target; tenant: Tenant; postgres?: boolean }> = [];
    const pglite = await startRealServer({
      databaseUrl: "memory:",
      label: "real server (PGlite)",
      nodeArgs: profileArgs,
    });
    stops.push(pglite.stop);
    const tenant = await prepareTenant(pglite);
    const captured = await captureResponses(pglite, tenant);
    if (only.has("real")) targets.push({ target: pglite, tenant });
    let postgresGrowth: Parameters<typeof measureGrowth>[0]["postgres"];
    if (postgresUrl && only.has("real")) {
      const scratch = await scratchPostgresDatabase(postgresUrl, "lsh_bench");
      stops.push(onInterrupt(scratch.drop));
      const postgres = await startRealServer({
        databaseUrl: scratch.url,
        label: "real server (PostgreSQL)",
        nodeArgs: profileArgs,
      });
      stops.push(postgres.stop);
      const postgresTenant = await prepareTenant(postgres);
      targets.push({ target: postgres, tenant: postgresTenant, postgres: true });
      postgresGrowth = { server: postgres, tenant: postgresTenant, databaseUrl: scratch.url };
    }
    const others = {
      framework: () => startCeiling("framework", captured),
      physical: () => startCeiling("physical", captured),
      prism: startPrism,
    };
    for (const [kind, start] of Object.entries(others)) {
      if (!only.has(kind)) continue;
      const target = await start();
      stops.push(target.stop);
      targets.push({ target, tenant });
    }

    // Before the servers take load: the floors' own processes, on a scratch database of each engine.
    let floors = new Map<string, Map<OperationId, Floor>>();
    if (only.has("real") && !flags["skip-floors"]) {
      const floorScratch = postgresUrl ? await scratchPostgresDatabase(postgresUrl, "lsh_floor") : undefined;
      try {
        floors = await measureAllFloors(floorScratch?.url);
      } finally {
        await floorScratch?.drop();
      }
    }
    const final = withFloors(withRatios(await measureAll(targets)), floors);
    const checks = checkTargets(final);
    // After the main rows, so the large brands' data does not weigh on them.
    const growth =
      only.has("real") && !flags["skip-growth"]
        ? await measureGrowth({ postgres: postgresGrowth, duration, warmup, connections })
        : undefined;
    const fanOut =
      only.has("real") && !flags["skip-fanout"]
        ? await measureFanOut({ postgresUrl, duration, warmup, connections })
        : undefined;
    const loadAfter = loadavg();
    console.log(`\n${table(final)}\n`);
    if (growth)
      console.log(
        `Growth rows (${GROWTH_STREAMS.toLocaleString("en")} streams in one brand; ÷ 20-stream: the same server's 20-stream brand):\n\n${growthTable(growth.rows)}\n\n${growthCheckLines(growth.report)}\n`,
      );
    if (fanOut)
      console.log(
        `Fan-out rows (÷ 1 webhook: the same server's 1-webhook brand):\n\n${fanOutTable(fanOut.rows)}\n\n${drainTable(fanOut.report)}\n\n${fanOutCheckLines(fanOut.report)}\n`,
      );
    console.log("Cycle rows count both requests (one create and one end per cycle).");
    console.log(
      `Machine: ${JSON.stringify(machine())}; load average ${loadBefore[0]!.toFixed(2)} before, ${loadAfter[0]!.toFixed(2)} after\n`,
    );
    console.log(`Targets:\n${targetLines(checks)}`);
    const out = flags.out ?? `${ROOT}.bench/latest.json`;
    writeResults(out, {
      date: new Date().toISOString(),
      machine: machine(),
      loadAverage: { before: loadBefore, after: loadAfter },
      settings: { connections, duration, warmup, postgres: Boolean(postgresUrl), cores },
      rows: [...final, ...(growth?.rows ?? []), ...(fanOut?.rows ?? [])],
      targets: checks,
      ...(growth ? { growth: growth.report } : {}),
      ...(fanOut ? { fanOut: fanOut.report } : {}),
      elapsedSeconds: (Date.now() - started) / 1000,
    });
  } finally {
    // Servers first, then the scratch database they used.
    for (const stop of stops.reverse()) await stop();
  }
  if (flags.profile) printProfiles(started);
}

function writeResults(file: string, results: unknown): void {
  mkdirSync(file.replace(/\/[^/]*$/, "") || ".", { recursive: true });
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nResults written to ${file}`);
}

function printProfiles(since: number): void {
  const files = readdirSync(profileDir)
    // CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile: thread 0 is the server; the others are tsx's loader.
    .filter((name) => /\.0\.\d+\.cpuprofile$/.test(name))
    .map((name) => `${profileDir}/${name}`)
    .filter((file) => statSync(file).mtimeMs >= since);
  for (const file of files) {
    console.log(
      `\nServer CPU profile ${file}\nSelf time by area:\n${formatHotspots(byArea(file).slice(0, 15))}\nHottest functions by self time:\n${formatHotspots(hotspots(file))}`,
    );
  }
}

async function startup(): Promise<void> {
  const runs = integerSetting({ "--runs": flags.runs }, "--runs", 5, { min: 1 });
  // --only names the targets by the start of their id: server, server-postgres, server-pglite, mock, prism.
  const compared = flags.compare ? startupTargets(postgresUrl, { root: flags.compare, checkout: flags.compare }) : [];
  const targets = [...startupTargets(postgresUrl), ...compared].filter(
    (target) => !flags.only || flags.only.split(",").some((prefix) => target.id.startsWith(prefix)),
  );
  const loadBefore = loadavg();
  console.log(
    `Start-up: ${runs} measured starts per target, after one unmeasured; Node ${process.version}.${postgresUrl ? "" : " (DATABASE_URL=postgres://… adds the server on PostgreSQL.)"}`,
  );
  try {
    const rows = await measureStartup(targets, runs);
    const checks = checkStartup(rows, targets);
    const loadAfter = loadavg();
    console.log(`\n${startupTable(rows)}\n`);
    console.log(
      `Machine: ${JSON.stringify(machine())}; load average ${loadBefore[0]!.toFixed(2)} before, ${loadAfter[0]!.toFixed(2)} after\n`,
    );
    console.log(`Targets:\n${targetLines(checks)}`);
    writeResults(flags.out ?? `${ROOT}.bench/startup.json`, {
      date: new Date().toISOString(),
      machine: machine(),
      loadAverage: { before: loadBefore, after: loadAfter },
      runs,
      rows,
      targets: checks,
    });
  } finally {
    await cleanUpStartupTargets();
  }
}

async function main(): Promise<void> {
  if (flags.help) return console.log(USAGE);
  if (flags.startup) return startup();
  if (!flags.memory) return throughput();
  const { ok, report } = await memoryCheck({ connections });
  writeResults(flags.out ?? `${ROOT}.bench/memory.json`, {
    date: new Date().toISOString(),
    machine: machine(),
    ...report,
  });
  if (!ok) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  killAll();
  process.exit(1);
});
