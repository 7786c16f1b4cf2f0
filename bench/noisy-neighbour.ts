/**
 * Victim delivery latency: how long after its event a brand's webhook delivery arrives, quiet (the
 * brand alone) and beside noisy neighbours (brands whose webhooks go to receivers that never
 * answer, starting and ending streams without pause). Each row starts `server/main.ts` afresh, as
 * `npm start` runs it, on the in-memory embedded database, and on a scratch PostgreSQL database
 * too when DATABASE_URL=postgres://… is set. The scenario is the suite's
 * (testkit/noisy-neighbour.ts).
 *
 *   npm run bench:noisy
 *   DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/postgres npm run bench:noisy -- --events 100 --out .bench/noisy.json
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { ADMIN_TOKEN, scratchPostgresDatabase } from "../testkit/harness.ts";
import { percentile, runNoisyNeighbour, startScenarioReceiver } from "../testkit/noisy-neighbour.ts";
import { runServer, serverOrigin, stop } from "../testkit/server-process.ts";
import { ROOT } from "./lib/children.ts";
import { machine } from "./lib/report.ts";

const { values: flags } = parseArgs({
  options: {
    events: { type: "string", default: "100" },
    out: { type: "string", default: `${ROOT}.bench/noisy-neighbour.json` },
  },
});

const SCENARIOS = [
  { name: "quiet: victim delivery latency", noisyBrands: 0, webhooksPerNoisyBrand: 0 },
  {
    name: "noisy neighbour: victim delivery latency (1 brand × 10 hanging webhooks)",
    noisyBrands: 1,
    webhooksPerNoisyBrand: 10,
  },
  {
    name: "noisy neighbour: victim delivery latency (32 brands × 16 hanging webhooks)",
    noisyBrands: 32,
    webhooksPerNoisyBrand: 16,
  },
] as const;

interface Row {
  scenario: string;
  engine: string;
  events: number;
  missing: number;
  p50: number;
  p99: number;
  max: number;
  noisyStreams: number;
  mostHangingPerBrand: number;
}

async function measure(engine: "PGlite" | "PostgreSQL", scenario: (typeof SCENARIOS)[number]): Promise<Row> {
  const scratch =
    engine === "PostgreSQL" ? await scratchPostgresDatabase(process.env.DATABASE_URL!, "lsh_bench_noisy") : null;
  const receiver = await startScenarioReceiver();
  const server = runServer({
    DATABASE_URL: scratch?.url ?? "memory:",
    ADMIN_TOKEN,
    WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
    LOG_LEVEL: "warn",
  });
  try {
    const base = await serverOrigin(server, 180_000);
    const events = Number(flags.events);
    const result = await runNoisyNeighbour(base, receiver, { ...scenario, victimEvents: events, graceMs: 60_000 });
    const { latenciesMs: sorted, missing } = result;
    return {
      scenario: scenario.name,
      engine,
      events,
      missing,
      p50: percentile(sorted, missing, 50),
      p99: percentile(sorted, missing, 99),
      max: missing > 0 ? Number.POSITIVE_INFINITY : sorted.at(-1)!,
      noisyStreams: result.noisyStreams,
      mostHangingPerBrand: result.mostHangingPerBrand,
    };
  } finally {
    await receiver.close();
    await stop(server);
    await scratch?.drop();
  }
}

const ms = (value: number) => (Number.isFinite(value) ? value.toLocaleString("en-US") : "never");

async function main(): Promise<void> {
  const loadBefore = loadavg();
  const engines: Array<"PGlite" | "PostgreSQL"> = process.env.DATABASE_URL?.startsWith("postgres")
    ? ["PGlite", "PostgreSQL"]
    : ["PGlite"];
  const rows: Row[] = [];
  for (const engine of engines)
    for (const scenario of SCENARIOS) {
      const row = await measure(engine, scenario);
      console.log(JSON.stringify(row));
      rows.push(row);
    }
  const loadAfter = loadavg();
  console.log(
    [
      "",
      "| row | engine | victim events | p50 ms | p99 ms | max ms | never arrived | noisy streams meanwhile | most held by one noisy brand |",
      "|---|---|---:|---:|---:|---:|---:|---:|---:|",
      ...rows.map(
        (row) =>
          `| ${row.scenario} | ${row.engine} | ${row.events} | ${ms(row.p50)} | ${ms(row.p99)} | ${ms(row.max)} | ${row.missing} | ${row.noisyStreams} | ${row.mostHangingPerBrand} |`,
      ),
    ].join("\n"),
  );
  console.log(
    `\nMachine: ${JSON.stringify(machine())}; load average ${loadBefore[0]!.toFixed(2)} before, ${loadAfter[0]!.toFixed(2)} after`,
  );
  mkdirSync(flags.out.replace(/\/[^/]*$/, "") || ".", { recursive: true });
  writeFileSync(
    flags.out,
    `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), loadAverage: { before: loadBefore, after: loadAfter }, rows }, (_, value) => (value === Number.POSITIVE_INFINITY ? null : value), 2)}\n`,
  );
  console.log(`Results written to ${flags.out}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
