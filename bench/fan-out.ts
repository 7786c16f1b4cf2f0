/**
 * Webhook fan-out: create-then-end for a brand with 1 webhook and one with 50 on the same real
 * server, and the delivery rate while a backlog of 10,000 deliveries drains, to a local receiver
 * answering at once. PGlite always; PostgreSQL too when DATABASE_URL=postgres://… is set (scratch
 * databases, dropped afterwards). `npm run bench` runs the same rows after its own.
 *
 *   npm run bench:fanout
 *   DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/postgres npm run bench:fanout -- --duration 10 --out .bench/fan-out.json
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { killAll, ROOT } from "./lib/children.ts";
import { drainTable, fanOutCheckLines, fanOutTable, measureFanOut } from "./lib/fan-out.ts";
import { machine } from "./lib/report.ts";

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "10" },
    out: { type: "string", default: `${ROOT}.bench/fan-out.json` },
  },
});

async function main(): Promise<void> {
  const loadBefore = loadavg();
  const postgresUrl = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : undefined;
  const settings = {
    duration: Number(flags.duration),
    warmup: Number(flags.warmup),
    connections: Number(flags.connections),
  };
  const { rows, report } = await measureFanOut({ postgresUrl, ...settings });
  const loadAfter = loadavg();
  console.log(`\n${fanOutTable(rows)}\n\n${drainTable(report)}\n\n${fanOutCheckLines(report)}`);
  console.log(
    `\nMachine: ${JSON.stringify(machine())}; load average ${loadBefore[0]!.toFixed(2)} before, ${loadAfter[0]!.toFixed(2)} after`,
  );
  mkdirSync(flags.out.replace(/\/[^/]*$/, "") || ".", { recursive: true });
  writeFileSync(
    flags.out,
    `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), loadAverage: { before: loadBefore, after: loadAfter }, settings, rows, fanOut: report }, null, 2)}\n`,
  );
  console.log(`Results written to ${flags.out}`);
}

main().catch((error) => {
  console.error(error);
  killAll();
  process.exit(1);
});
