import { mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { scratchPostgresDatabase } from "../server/testing/harness.ts";
import { killAll, ROOT } from "./lib/children.ts";
import { measure } from "./lib/load.ts";
import { OPERATIONS } from "./lib/operations.ts";
import { checkTargets, machine, type Row, table, targetLines, withRatios } from "./lib/report.ts";
import { startCeiling, startPrism, startRealServer, type Target } from "./lib/targets.ts";
import { captureResponses, prepareTenant, type Tenant } from "./lib/tenant.ts";
import { memoryCheck } from "./memory.ts";
import { byArea, formatHotspots, hotspots } from "./profile.ts";

const USAGE = `npm run bench -- [--duration S] [--warmup S] [--connections N] [--quick] [--memory] [--profile] [--out FILE]
  --duration S     seconds measured per row (default 10, or BENCH_DURATION)
  --warmup S       seconds of unmeasured load before each row (default 2)
  --quick          a smoke run: 2 s per row, 0.5 s warm-up
  --memory         the memory check instead: RSS after 10,000 and after 100,000 requests
  --profile        run the real server with --cpu-prof and print its hottest functions
  --out FILE       where the JSON results go (default .bench/latest.json)
DATABASE_URL=postgres://… adds real-server rows on PostgreSQL (in a scratch database, dropped afterwards).`;

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string" },
    warmup: { type: "string" },
    connections: { type: "string", default: "10" },
    quick: { type: "boolean", default: false },
    memory: { type: "boolean", default: false },
    profile: { type: "boolean", default: false },
    out: { type: "string" },
    help: { type: "boolean", default: false },
  },
});

function seconds(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!(value > 0)) throw new Error(`${name} must be a positive number of seconds, got "${raw}"`);
  return value;
}

const duration = flags.quick ? 2 : seconds(flags.duration ?? process.env.BENCH_DURATION, 10, "--duration");
const warmup = flags.quick ? 0.5 : seconds(flags.warmup, 2, "--warmup");
const connections = Number(flags.connections);
const postgresUrl = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : undefined;
const profileDir = `${ROOT}.bench/profiles`;

/** Every operation against one target: a warm-up, then the measured run. */
async function benchTarget(target: Target, tenant: Tenant): Promise<Row[]> {
  const rows: Row[] = [];
  for (const operation of OPERATIONS) {
    const requests = operation.requests(target, tenant);
    await measure({ url: target.url, requests, connections, duration: warmup });
    const result = await measure({ url: target.url, requests, connections, duration });
    console.log(`  ${operation.label.padEnd(28)} ${target.label.padEnd(24)} ${result.rps.toFixed(0).padStart(6)} req/s  p50 ${result.p50.toFixed(2)} ms  p99 ${result.p99.toFixed(2)} ms${result.non2xx + result.errors ? `  (${result.non2xx} non-2xx, ${result.errors} errors)` : ""}`);
    rows.push({ ...result, operation: operation.id, operationLabel: operation.label, target: target.kind, targetLabel: target.label });
  }
  return rows;
}

async function throughput(): Promise<void> {
  const started = Date.now();
  const rows: Row[] = [];
  const engines: Array<{ label: string; databaseUrl: string; drop(): Promise<void> }> = [{ label: "real server (PGlite)", databaseUrl: "memory:", drop: async () => undefined }];
  if (postgresUrl) {
    const scratch = await scratchPostgresDatabase(postgresUrl, "lsh_bench");
    engines.push({ label: "real server (PostgreSQL)", databaseUrl: scratch.url, drop: scratch.drop });
  }
  console.log(`Benchmark: ${connections} connections, ${duration} s per row after ${warmup} s of warm-up; autocannon in this process, each server in its own.`);

  let captured: Awaited<ReturnType<typeof captureResponses>> | undefined;
  let tenant: Tenant | undefined;
  for (const engine of engines) {
    const server = await startRealServer({
      databaseUrl: engine.databaseUrl,
      label: engine.label,
      nodeArgs: flags.profile ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [],
    });
    try {
      const engineTenant = await prepareTenant(server);
      if (!captured) {
        tenant = engineTenant;
        captured = await captureResponses(server, engineTenant);
      }
      rows.push(...(await benchTarget(server, engineTenant)));
    } finally {
      await server.stop();
      await engine.drop();
    }
  }
  for (const start of [() => startCeiling("framework", captured!), () => startCeiling("physical", captured!), startPrism]) {
    const target = await start();
    try {
      rows.push(...(await benchTarget(target, tenant!)));
    } finally {
      await target.stop();
    }
  }

  const ordered = OPERATIONS.flatMap((operation) => rows.filter((row) => row.operation === operation.id));
  const final = withRatios(ordered);
  const checks = checkTargets(final);
  console.log(`\n${table(final)}\n`);
  console.log("Cycle rows count both requests (one create and one end per cycle).");
  console.log(`Machine: ${JSON.stringify(machine())}\n`);
  console.log(`Targets:\n${targetLines(checks)}`);
  const out = flags.out ?? `${ROOT}.bench/latest.json`;
  writeResults(out, { date: new Date().toISOString(), machine: machine(), settings: { connections, duration, warmup, postgres: Boolean(postgresUrl) }, rows: final, targets: checks, elapsedSeconds: (Date.now() - started) / 1000 });
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
    console.log(`\nServer CPU profile ${file}\nSelf time by area:\n${formatHotspots(byArea(file).slice(0, 15))}\nHottest functions by self time:\n${formatHotspots(hotspots(file))}`);
  }
}

async function main(): Promise<void> {
  if (flags.help) return console.log(USAGE);
  if (!flags.memory) return throughput();
  const { ok, report } = await memoryCheck({ connections });
  writeResults(flags.out ?? `${ROOT}.bench/memory.json`, { date: new Date().toISOString(), machine: machine(), ...report });
  if (!ok) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  killAll();
  process.exit(1);
});
