import { readdirSync } from "node:fs";
import { parseArgs } from "node:util";

import { scratchPostgresDatabase } from "../server/testing/harness.ts";
import { killAll, ROOT } from "./lib/children.ts";
import { separateGeneratorFromServers } from "./lib/cores.ts";
import { byArea, formatHotspots, hotspots } from "./profile.ts";
import { run } from "./lib/load.ts";
import { cpuSeconds, postgresPids, totalCpuSeconds } from "./lib/process-cpu.ts";
import { OPERATIONS } from "./lib/operations.ts";
import { startCeiling, startRealServer, type Target } from "./lib/targets.ts";
import { captureResponses, prepareTenant, type Tenant } from "./lib/tenant.ts";

/**
 * Server CPU per request, beside the framework ceiling's: a fixed number of requests per
 * operation, and the CPU time (user + system, from /proc/PID/stat) each server process spent
 * answering them. Unlike req/s, this does not depend on how fast the load generator (which shares
 * the machine's cores) can send, so it shows what a change costs the server itself.
 */
const { values: flags } = parseArgs({
  options: {
    requests: { type: "string", default: "20000" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "10" },
    only: { type: "string" },
    profile: { type: "boolean", default: false },
    "share-cores": { type: "boolean", default: false },
  },
});
const amount = Number(flags.requests);
const rounds = Number(flags.rounds);
const connections = Number(flags.connections);
// DATABASE_URL=postgres://… measures the server on PostgreSQL (a scratch database) instead, and
// the PostgreSQL server's processes' CPU beside it.
const postgresUrl = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : undefined;
/** CPU µs per request of the target's process and, when `database`, of the PostgreSQL processes meanwhile. */
async function cpuPerRequest(
  target: Target,
  tenant: Tenant,
  operation: (typeof OPERATIONS)[number],
  database: boolean,
): Promise<{ server: number; database: number | null }> {
  const requests = operation.requests(target, tenant);
  const databasePids = database ? postgresPids() : [];
  const before = cpuSeconds(target.pid);
  const databaseBefore = totalCpuSeconds(databasePids);
  await run({ url: target.url, requests, connections, amount });
  const perRequest = (seconds: number) => (seconds / amount) * 1e6;
  return {
    server: perRequest(cpuSeconds(target.pid) - before),
    database: database ? perRequest(totalCpuSeconds(databasePids) - databaseBefore) : null,
  };
}

let scratch: Awaited<ReturnType<typeof scratchPostgresDatabase>> | undefined;
try {
  const profileDir = `${ROOT}.bench/profiles/cpu-${Date.now()}`;
  const nodeArgs = flags.profile ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
  // Before any server starts, so each is moved to the servers' cores as it starts (bench/lib/cores.ts).
  const cores = flags["share-cores"] ? "shared" : separateGeneratorFromServers();
  scratch = postgresUrl ? await scratchPostgresDatabase(postgresUrl, "lsh_bench") : undefined;
  const real = await startRealServer({
    databaseUrl: scratch?.url ?? "memory:",
    label: scratch ? "real server (PostgreSQL)" : "real server (PGlite)",
    nodeArgs,
  });
  const tenant = await prepareTenant(real);
  const captured = await captureResponses(real, tenant);
  const framework = await startCeiling(
    "framework",
    captured,
    flags.profile ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}/framework`] : [],
  );
  const targets: Array<{ target: Target; tenant: Tenant }> = [
    { target: real, tenant },
    { target: framework, tenant },
  ];
  console.log(
    `Server CPU per request (µs, user + system), ${amount} requests per round, ${connections} connections, ${rounds} rounds in turn; cores: ${cores}`,
  );
  for (const operation of OPERATIONS.filter((op) =>
    flags.only ? flags.only.split(",").includes(op.id) : op.id !== "cycle",
  )) {
    const samples = new Map<Target, number[]>(targets.map(({ target }) => [target, []]));
    const databaseCpu: number[] = [];
    for (const { target } of targets)
      await run({ url: target.url, requests: operation.requests(target, tenant), connections, amount: amount / 4 });
    for (let round = 0; round < rounds; round++) {
      for (const { target } of targets) {
        const measured = await cpuPerRequest(target, tenant, operation, scratch !== undefined && target === real);
        samples.get(target)!.push(measured.server);
        if (measured.database !== null) databaseCpu.push(measured.database);
      }
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    if (databaseCpu.length > 0)
      console.log(
        `  ${operation.label.padEnd(28)} PostgreSQL's processes ${median(databaseCpu).toFixed(1)} µs per request (${databaseCpu.map((v) => v.toFixed(0)).join(", ")})`,
      );
    const realCpu = median(samples.get(real)!);
    const fwCpu = median(samples.get(framework)!);
    console.log(
      `  ${operation.label.padEnd(28)} real ${realCpu.toFixed(1).padStart(6)}  framework ${fwCpu.toFixed(1).padStart(6)}  framework ÷ real ${(fwCpu / realCpu).toFixed(2)}   (real ${samples
        .get(real)!
        .map((v) => v.toFixed(0))
        .join(", ")}; fw ${samples
        .get(framework)!
        .map((v) => v.toFixed(0))
        .join(", ")})`,
    );
  }
  if (flags.profile) {
    await real.stop();
    await framework.stop();
    for (const [label, dir] of [
      ["Real server", profileDir],
      ["Framework ceiling", `${profileDir}/framework`],
    ] as const) {
      for (const name of readdirSync(dir).filter((name) => /\.0\.\d+\.cpuprofile$/.test(name))) {
        const file = `${dir}/${name}`;
        console.log(
          `\n${label} profile ${file}\n${formatHotspots(byArea(file).slice(0, 15))}\n${formatHotspots(hotspots(file, 40))}`,
        );
      }
    }
  }
} finally {
  killAll();
  await scratch?.drop();
}
