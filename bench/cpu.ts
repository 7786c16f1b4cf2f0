import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";

import { scratchPostgresDatabase } from "../testkit/harness.ts";
import { killAll, onInterrupt, ROOT } from "./lib/children.ts";
import { separateGeneratorFromServers } from "./lib/cores.ts";
import { type FloorReplayer, startFloorReplayer } from "./lib/floor-replayer.ts";
import { run } from "./lib/load.ts";
import { scrapeMetrics } from "./lib/metrics-scraper.ts";
import { type Operation, OPERATIONS } from "./lib/operations.ts";
import { median, pairedNoise, pairOrder, quartiles } from "./lib/paired.ts";
import { backendsOf, cpuSince, cpuSnapshot, preciseCpuSeconds } from "./lib/process-cpu.ts";
import {
  startCeiling,
  startFullStackCeiling,
  startLeanReference,
  type RealServer,
  startRealServer,
  type Target,
} from "./lib/targets.ts";
import { captureResponses, prepareTenant, type Tenant } from "./lib/tenant.ts";
import { type WarmUp, warmUntilSteady } from "./lib/warm-up.ts";
import { byArea, formatHotspots, hotspots } from "./profile.ts";

const USAGE = `node bench/cpu.ts [--only get,list,creators,cycle] [--quick] [--rounds N] [--requests N] [--profile]
  Server CPU per request (user + system, from /proc), split into framework, database floor and own
  work, beside the lean reference and the full-stack ceiling; and real servers with the request
  log on beside as many with it off (REQUEST_LOG=off), in the same rounds: the log's cost, round
  by round with its median and quartiles. DATABASE_URL=postgres://… measures on
  PostgreSQL (a scratch database, dropped afterwards) instead of PGlite.
  --requests N         requests per target per round (default 2000)
  --rounds N           measured rounds, every target once in each, the twin servers A/B then B/A (default 30)
  --warmup N           at least this many requests of warm-up per target and operation (default 20000)
  --tolerance F        warm-up ends once two consecutive batches agree within F (default 0.05)
  --log-servers N      real servers on each side of the request log's comparison (default 3, at least 2)
  --quick              a smoke run: 500 requests, 4 rounds, warm-up of at least 2,000
  --scrape-interval S  seconds between scrapes of each server's /metrics (default 15)
  --out FILE           the JSON of the run (default .bench/cpu-latest.json)`;

const { values: flags } = parseArgs({
  options: {
    requests: { type: "string" },
    rounds: { type: "string" },
    warmup: { type: "string" },
    tolerance: { type: "string", default: "0.05" },
    connections: { type: "string", default: "10" },
    "scrape-interval": { type: "string", default: "15" },
    only: { type: "string" },
    quick: { type: "boolean", default: false },
    profile: { type: "boolean", default: false },
    "share-cores": { type: "boolean", default: false },
    "log-servers": { type: "string", default: "3" },
    out: { type: "string" },
    help: { type: "boolean", default: false },
  },
});
if (flags.help) {
  console.log(USAGE);
  process.exit(0);
}
const amount = Number(flags.requests ?? (flags.quick ? 500 : 2000));
const rounds = Number(flags.rounds ?? (flags.quick ? 4 : 30));
const warmupMin = Number(flags.warmup ?? (flags.quick ? 2000 : 20_000));
const tolerance = Number(flags.tolerance);
const connections = Number(flags.connections);
const logServers = Number(flags["log-servers"]);
if (!Number.isInteger(logServers) || logServers < 2) {
  console.error(`--log-servers must be a whole number of at least 2, got "${flags["log-servers"]}"\n\n${USAGE}`);
  process.exit(2);
}
const postgresUrl = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : undefined;
const operations = OPERATIONS.filter((op) =>
  flags.only ? flags.only.split(",").includes(op.id) : ["list", "get", "creators", "cycle"].includes(op.id),
);

/** One thing measured in the rounds: an HTTP target under load, or the floor's replays. */
interface Measured {
  label: string;
  pid: number;
  send(operation: Operation, requests: number): Promise<void>;
}

function httpTarget(target: Target, tenant: Tenant, label = target.label): Measured {
  return {
    label,
    pid: target.pid,
    send: async (operation, requests) => {
      const result = await run({
        url: target.url,
        requests: operation.requests(target, tenant),
        connections,
        amount: requests,
      });
      if (result.non2xx > 0 || result.errors > 0)
        throw new Error(`${label}, ${operation.label}: ${result.non2xx} answers not 2xx, ${result.errors} errors`);
    },
  };
}

function floorTarget(floor: FloorReplayer): Measured {
  return {
    label: "database floor",
    pid: floor.pid,
    send: async (operation, requests) => {
      const failed = await floor.replay(operation.id, requests, connections);
      if (failed > 0) throw new Error(`database floor, ${operation.label}: ${failed} replays failed`);
    },
  };
}

/** The scratch database's name on PostgreSQL, whose backends' CPU each row counts. */
let scratchDatabase: string | undefined;

/** CPU µs per request of the measured process and, on PostgreSQL, of the scratch database's backends meanwhile. */
async function cpuPerRequest(measured: Measured, operation: Operation, requests: number) {
  const backends = cpuSnapshot(scratchDatabase ? backendsOf(scratchDatabase) : []);
  const before = preciseCpuSeconds(measured.pid);
  await measured.send(operation, requests);
  const perRequest = (seconds: number) => (seconds / requests) * 1e6;
  return {
    own: perRequest(preciseCpuSeconds(measured.pid) - before),
    postgres: perRequest(cpuSince(backends, scratchDatabase ? backendsOf(scratchDatabase) : [])),
  };
}

const format = (value: number) => value.toFixed(0).padStart(5);

let dropScratch: (() => Promise<void>) | undefined;
const scrapers: Array<{ stop(): void; failed(): number }> = [];
try {
  const cores = flags["share-cores"] ? "shared" : separateGeneratorFromServers();
  const scratch = postgresUrl ? await scratchPostgresDatabase(postgresUrl, "lsh_bench") : undefined;
  if (scratch) dropScratch = onInterrupt(scratch.drop);
  scratchDatabase = scratch ? new URL(scratch.url).pathname.slice(1) : undefined;
  const databaseUrl = scratch?.url ?? "memory:";
  const engine = scratch ? "PostgreSQL" : "PGlite";
  const profileDir = `${ROOT}.bench/profiles/cpu-${Date.now()}`;

  const realA = await startRealServer({
    databaseUrl,
    label: `real server A (${engine})`,
    nodeArgs: flags.profile ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [],
  });
  const realB = await startRealServer({ databaseUrl, label: `real server B (${engine})` });
  // What the request log costs a request: the twins and more servers like them with the log on,
  // against as many with it off. Several on each side, as identical processes kept apart by 5 to
  // 25 % for a whole run on the shared machine (how each was compiled and laid out), more than
  // the 10 % the log is held to.
  const moreOn: RealServer[] = [];
  for (let index = 0; index < logServers - 2; index++)
    moreOn.push(await startRealServer({ databaseUrl, label: `real server ${index + 3} (${engine})` }));
  const realOff: RealServer[] = [];
  for (let index = 0; index < logServers; index++)
    realOff.push(
      await startRealServer({
        databaseUrl,
        label: `real server ${index + 1}, log off (${engine})`,
        env: { REQUEST_LOG: "off" },
      }),
    );
  const tenantA = await prepareTenant(realA);
  const tenantB = await prepareTenant(realB);
  const logTargets = async (servers: RealServer[], labels: (index: number) => string) => {
    const measured: Measured[] = [];
    for (const [index, server] of servers.entries())
      measured.push(httpTarget(server, await prepareTenant(server), labels(index)));
    return measured;
  };
  const captured = await captureResponses(realA, tenantA);
  const framework = await startCeiling("framework", captured);
  const lean = await startLeanReference(captured, tenantA.key);
  const fullStack = await startFullStackCeiling(databaseUrl);
  const floor = await startFloorReplayer(databaseUrl);
  const scrapeMs = Number(flags["scrape-interval"]) * 1000;
  for (const server of [realA, realB, ...moreOn, ...realOff])
    scrapers.push(scrapeMetrics(server.url, server.metricsToken, scrapeMs));
  scrapers.push(scrapeMetrics(fullStack.target.url, fullStack.metricsToken, scrapeMs));
  scrapers.push(scrapeMetrics(lean.url, "", scrapeMs));

  const a = httpTarget(realA, tenantA, `real server (${engine})`);
  const b = httpTarget(realB, tenantB, "its identical twin");
  const on = [a, b, ...(await logTargets(moreOn, (index) => `another, log on ${index + 1}`))];
  const off = await logTargets(realOff, (index) => `request log off ${index + 1}`);
  const others = [
    httpTarget(framework, tenantA),
    floorTarget(floor),
    httpTarget(fullStack.target, fullStack.tenant),
    httpTarget(lean, tenantA),
  ];
  const started = new Date().toISOString();
  const startLoad = loadavg();
  console.log(
    `Server CPU per request (µs on a CPU, /proc schedstat), ${connections} connections, warm-up ≥ ${warmupMin} requests until two batches agree within ${tolerance * 100} %, then ${rounds} rounds of ${amount} requests, every target in each, the twins A/B then B/A; metrics on and scraped every ${scrapeMs / 1000} s; cores: ${cores}; load average ${startLoad[0]!.toFixed(1)}`,
  );

  const results: unknown[] = [];
  const out = flags.out ?? `${ROOT}.bench/cpu-latest.json`;
  mkdirSync(dirname(out), { recursive: true });
  // Written after every operation, so a run cut short keeps what it measured.
  const save = () =>
    writeFileSync(
      out,
      JSON.stringify(
        {
          started,
          engine,
          settings: { amount, rounds, warmupMin, tolerance, connections, scrapeMs, cores },
          loadAverage: { start: startLoad, now: loadavg() },
          results,
        },
        null,
        2,
      ),
    );
  for (const operation of operations) {
    const warmUps = new Map<string, WarmUp>();
    for (const measured of [...on, ...off, ...others]) {
      const warmUp = await warmUntilSteady(async () => (await cpuPerRequest(measured, operation, amount)).own, {
        batchSize: amount,
        min: warmupMin,
        max: warmupMin * 5,
        tolerance,
      });
      warmUps.set(measured.label, warmUp);
    }
    const samples = new Map<string, number[]>([...on, ...off, ...others].map((m) => [m.label, []]));
    const postgresSamples = new Map<string, number[]>([...on, ...off, ...others].map((m) => [m.label, []]));
    for (let round = 0; round < rounds; round++) {
      // The twins A/B then B/A, the others turn by turn, and the servers with the log off before
      // or after those with it on, round by round.
      const twins = pairOrder([a, b] as const, round);
      const turn = <T>(list: T[]) => [...list.slice(round % list.length), ...list.slice(0, round % list.length)];
      const withLog = [...twins, ...turn(on.slice(2))];
      const order = round % 2 === 0 ? [...withLog, ...turn(off)] : [...turn(off), ...withLog];
      for (const measured of [...order, ...others]) {
        const { own, postgres } = await cpuPerRequest(measured, operation, amount);
        samples.get(measured.label)!.push(own);
        postgresSamples.get(measured.label)!.push(postgres);
      }
    }
    const cpu = (m: Measured) => median(samples.get(m.label)!);
    const pg = (m: Measured) => median(postgresSamples.get(m.label)!);
    const noise = pairedNoise(samples.get(a.label)!, samples.get(b.label)!);
    const [fw, fl, full, leanRef] = others as [Measured, Measured, Measured, Measured];
    const own = cpu(a) - cpu(fw) - cpu(fl);
    const fullOwn = cpu(full) - cpu(fw);
    const pgNote = (m: Measured) => (postgresUrl ? `  + PostgreSQL ${format(pg(m))}` : "");
    const warmNote = (m: Measured) => {
      const warm = warmUps.get(m.label)!;
      return `warm-up ${warm.requests} req${warm.steady ? "" : " (never steady)"}: ${warm.batches.map((v) => v.toFixed(0)).join(" ")}`;
    };
    console.log(
      `\n${operation.label}  (median of ${rounds} rounds; ± paired noise of the twins: ${noise.toFixed(1)} µs)`,
    );
    for (const m of [...on, ...off, fw, fl, full, leanRef])
      console.log(`  ${m.label.padEnd(26)} ${format(cpu(m))}${pgNote(m)}    ${warmNote(m)}`);
    // The mean of the servers with the log on against the mean of those with it off: what the
    // request log costs a request; the same round by round, whose quartiles show its spread; and
    // the range of each side's servers.
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    const logOn = mean(on.map(cpu));
    const logOff = mean(off.map(cpu));
    const logCost = (logOn - logOff) / logOff;
    const roundCosts = samples.get(a.label)!.map((_, round) => {
      const at = (m: Measured) => samples.get(m.label)![round]!;
      return mean(on.map(at)) / mean(off.map(at)) - 1;
    });
    const perRound = { median: median(roundCosts), ...quartiles(roundCosts) };
    const range = (side: Measured[]) =>
      `${format(Math.min(...side.map(cpu)))}–${format(Math.max(...side.map(cpu)))}`.replaceAll(" ", "");
    const percent = (value: number) => `${value >= 0 ? "+" : ""}${(value * 100).toFixed(1)} %`;
    console.log(
      `  request log on ${format(logOn)} / off ${format(logOff)} (means of ${logServers} servers each; on ${range(on)}, off ${range(off)}): ${percent(logCost)}; round by round ${percent(perRound.median)} (quartiles ${percent(perRound.q1)} to ${percent(perRound.q3)})${postgresUrl ? `; PostgreSQL on ${format(mean(on.map(pg)))} / off ${format(mean(off.map(pg)))}` : ""}`,
    );
    console.log(
      `  split of the real server:  framework ${format(cpu(fw))}  floor ${format(cpu(fl))}  own ${format(own)} ± ${noise.toFixed(0)}`,
    );
    console.log(
      `  full-stack ceiling ${format(cpu(full))} = ${(cpu(full) / cpu(leanRef)).toFixed(2)}× the lean reference; its own work above the framework ${format(fullOwn)} ± ${noise.toFixed(0)}; real − full-stack ${format(cpu(a) - cpu(full))} ± ${noise.toFixed(0)}`,
    );
    results.push({
      operation: operation.id,
      label: operation.label,
      noise,
      split: { real: cpu(a), framework: cpu(fw), floor: cpu(fl), own },
      requestLog: {
        servers: logServers,
        on: logOn,
        off: logOff,
        cost: logCost,
        perRound,
        onServers: on.map(cpu),
        offServers: off.map(cpu),
      },
      fullStack: cpu(full),
      lean: cpu(leanRef),
      postgres: postgresUrl ? Object.fromEntries([...on, ...off, fl].map((m) => [m.label, pg(m)])) : null,
      samples: Object.fromEntries(samples),
      warmUps: Object.fromEntries(warmUps),
    });
    save();
  }
  const failedScrapes = scrapers.reduce((sum, scraper) => sum + scraper.failed(), 0);
  if (failedScrapes > 0) console.log(`\n${failedScrapes} scrapes of /metrics failed`);
  console.log(`\nJSON: ${out}`);

  if (flags.profile) {
    await realA.stop();
    for (const name of readdirSync(profileDir).filter((name) => name.endsWith(".cpuprofile"))) {
      const file = `${profileDir}/${name}`;
      console.log(
        `\nReal server profile ${file}\n${formatHotspots(byArea(file).slice(0, 15))}\n${formatHotspots(hotspots(file, 40))}`,
      );
    }
  }
} finally {
  for (const scraper of scrapers) scraper.stop();
  killAll();
  await dropScratch?.();
}
