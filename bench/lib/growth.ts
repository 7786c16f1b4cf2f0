import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { Request } from "autocannon";
import { ALL_SCOPES } from "../../server/domain/types.ts";
import { createBrand, createKey } from "../../server/services/operator.ts";
import { seedCreators, stockCreators } from "../../server/store/creators.ts";
import { type Database, openDatabase } from "../../server/store/database.ts";
import { migrate } from "../../server/store/migrate.ts";
import { seedStreams } from "../../testkit/seed-streams.ts";
import { type Measurement, run, summarise } from "./load.ts";
import { fixed, markdownTable, type Ratios, type Row } from "./report.ts";
import { type RealServer, startRealServer } from "./targets.ts";
import { prepareTenant, type Tenant } from "./tenant.ts";

/** Streams of the large brand, and the offset of its deep page (the middle: as far from either end as a page can be). */
export const GROWTH_STREAMS = 100_000;
export const DEEP_OFFSET = 50_000;

export type GrowthOperationId = "growth-small-list" | "growth-list" | "growth-deep" | "growth-get" | "growth-analytics";

/** A brand of 20 streams (made through the API) and one of 100,000 (inserted by the benchmark) on the same server. */
interface GrowthTarget {
  server: RealServer;
  small: Tenant;
  large: { key: string; deepStreamId: string };
}

interface GrowthOperation {
  id: GrowthOperationId;
  label: string;
  /**
   * The analytics row runs one request at a time (its p50 is the time of one answer), a number of
   * answers per round rather than for a time: a round of 2 s could end before its first answer.
   */
  connections?: number;
  answersPerRound?: number;
  request(target: GrowthTarget): Request;
}

const get = (path: string, key: string): Request => ({
  method: "GET",
  path: `/api/v1${path}`,
  headers: { authorization: `Bearer ${key}` },
});

const OPERATIONS: readonly GrowthOperation[] = [
  {
    id: "growth-small-list",
    label: "GET /streams?limit=20, 20 streams",
    request: (t) => get("/streams?limit=20", t.small.key),
  },
  {
    id: "growth-list",
    label: "GET /streams?limit=20, 100k streams",
    request: (t) => get("/streams?limit=20", t.large.key),
  },
  {
    id: "growth-deep",
    label: `GET /streams?limit=20&offset=${DEEP_OFFSET}, 100k`,
    request: (t) => get(`/streams?limit=20&offset=${DEEP_OFFSET}`, t.large.key),
  },
  {
    id: "growth-get",
    label: "GET /streams/{id}, 100k streams",
    request: (t) => get(`/streams/${t.large.deepStreamId}`, t.large.key),
  },
  {
    id: "growth-analytics",
    label: "GET /analytics?period=30d, 100k, 1 conn",
    connections: 1,
    answersPerRound: 2,
    request: (t) => get("/analytics?period=30d", t.large.key),
  },
];

/** The benchmark brand's settings (tenant.ts): a raised request rate by prior arrangement. */
const BRAND = {
  name: "Benchmark brand, 100,000 streams",
  vertical: "live-commerce",
  plan: "growth",
  rate_limit_per_minute: 100_000_000,
  max_active_streams: 1_000,
} as const;

/**
 * The large brand, written straight into the server's database as an operator would load data:
 * a brand, a test key, and 100,000 finished streams over the last 29 days in one INSERT … SELECT
 * (the triggers of migration 005 count and place them in the same statement), then statistics
 * and the visibility map brought up to date, as autovacuum would after such an insert.
 */
async function seedLargeBrand(db: Database): Promise<GrowthTarget["large"]> {
  await migrate(db);
  await seedCreators(db);
  const now = new Date();
  const brand = await db.transaction((tx) => createBrand(tx, BRAND, now));
  const { key } = await createKey(
    db,
    { brand_id: brand.id, name: "benchmark", environment: "test", scopes: [...ALL_SCOPES] },
    now,
  );
  await seedStreams(db, { brandId: brand.id, count: GROWTH_STREAMS, now, creatorId: stockCreators()[0]!.id });
  await db.exec("VACUUM ANALYZE");
  const [deep] = await db.query<{ id: string }>(
    "SELECT id FROM streams WHERE brand_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET $2",
    [brand.id, DEEP_OFFSET],
  );
  return { key, deepStreamId: deep!.id };
}

/** The real server on the embedded database kept on disk (PGlite in memory cannot be loaded from outside), the large brand loaded before it starts. */
async function startPgliteTarget(): Promise<{ target: GrowthTarget; stop(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "lsh-bench-growth-"));
  const db = await openDatabase(undefined, { dataDir });
  const large = await seedLargeBrand(db);
  await db.close();
  const server = await startRealServer({
    databaseUrl: "",
    env: { DATA_DIR: dataDir },
    label: "real server (PGlite on disk)",
  });
  return {
    target: { server, small: await prepareTenant(server), large },
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const MIB = 2 ** 20;

/** VmRSS or VmHWM (peak since the last reset) of a process, in bytes. */
function memoryOf(pid: number, field: "VmRSS" | "VmHWM"): number {
  const kib = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kib) * 1024;
}

export interface GrowthResult {
  rows: Row[];
  report: Record<string, unknown>;
}

/**
 * The growth rows: on each engine, one server with a 20-stream brand and a 100,000-stream brand,
 * each operation measured on it as the main rows are (warm-up, then rounds), so the large brand's
 * figures can be divided by the small brand's of the same server and run. The analytics row runs
 * at one connection and records the server's peak RSS above its RSS before the row.
 */
export async function measureGrowth({
  postgres,
  duration,
  warmup,
  connections,
}: {
  /** The PostgreSQL target of the main rows, its 20-stream tenant and its database's URL. */
  postgres?: { server: RealServer; tenant: Tenant; databaseUrl: string };
  duration: number;
  warmup: number;
  connections: number;
}): Promise<GrowthResult> {
  const started = Date.now();
  const targets: GrowthTarget[] = [];
  const stops: Array<() => Promise<void>> = [];
  try {
    console.log(`\nGrowth rows: loading ${GROWTH_STREAMS.toLocaleString("en")} streams into one brand per engine…`);
    const pglite = await startPgliteTarget();
    stops.push(pglite.stop);
    targets.push(pglite.target);
    if (postgres) {
      const db = await openDatabase(postgres.databaseUrl);
      try {
        targets.push({ server: postgres.server, small: postgres.tenant, large: await seedLargeBrand(db) });
      } finally {
        await db.close();
      }
    }
    console.log(`  loaded in ${((Date.now() - started) / 1000).toFixed(0)} s`);

    const rows: Row[] = [];
    const memory: Array<Record<string, unknown>> = [];
    const rounds = Math.max(1, Math.round(duration / 2));
    for (const operation of OPERATIONS) {
      const load = (target: GrowthTarget, seconds: number) =>
        run({
          url: target.server.url,
          requests: [operation.request(target)],
          connections: operation.connections ?? connections,
          ...(operation.answersPerRound ? { amount: operation.answersPerRound } : { duration: seconds }),
        });
      const rssBefore = new Map<GrowthTarget, number>();
      for (const target of targets) {
        await load(target, warmup);
        if (operation.id === "growth-analytics") {
          rssBefore.set(target, memoryOf(target.server.pid, "VmRSS"));
          // Resets VmHWM to the current RSS, so the peak read after the row is the row's own.
          writeFileSync(`/proc/${target.server.pid}/clear_refs`, "5");
        }
      }
      const runs = new Map(targets.map((target) => [target, [] as Awaited<ReturnType<typeof run>>[]]));
      for (let round = 0; round < rounds; round++) {
        for (const target of targets) runs.get(target)!.push(await load(target, duration / rounds));
      }
      for (const target of targets) {
        const result = summarise(runs.get(target)!);
        const row: Row = {
          ...result,
          operation: operation.id,
          operationLabel: operation.label,
          target: "real",
          targetLabel: target.server.label,
        };
        rows.push(row);
        let note = "";
        if (rssBefore.has(target)) {
          const before = rssBefore.get(target)!;
          const peak = memoryOf(target.server.pid, "VmHWM");
          memory.push({
            targetLabel: target.server.label,
            rssBeforeBytes: before,
            peakRssBytes: peak,
            growthBytes: peak - before,
          });
          note = `  RSS ${(before / MIB).toFixed(0)} → peak ${(peak / MIB).toFixed(0)} MiB (+${((peak - before) / MIB).toFixed(1)} MiB)`;
        }
        console.log(
          `  ${operation.label.padEnd(42)} ${target.server.label.padEnd(28)} ${result.rps.toFixed(0).padStart(6)} req/s  p50 ${result.p50.toFixed(2)} ms  p99 ${result.p99.toFixed(2)} ms${result.non2xx + result.errors ? `  (${result.non2xx} non-2xx, ${result.errors} errors)` : ""}${note}`,
        );
      }
    }
    const withRatios = rows.map((row) => {
      const small = rows.find(
        (other) => other.operation === "growth-small-list" && other.targetLabel === row.targetLabel,
      );
      return { ...row, vsFramework: null, vsPrism: null, ...(small ? { vsSmallBrand: ratios(row, small) } : {}) };
    });
    return {
      rows: withRatios,
      report: {
        streams: GROWTH_STREAMS,
        deepOffset: DEEP_OFFSET,
        analyticsMemory: memory,
        checks: growthChecks(withRatios, memory),
        loadAverageAfter: loadavg(),
        elapsedSeconds: (Date.now() - started) / 1000,
      },
    };
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

function ratios(row: Measurement, reference: Measurement): Ratios {
  return { rps: row.rps / reference.rps, p50: row.p50 / reference.p50, p99: row.p99 / reference.p99 };
}

/** The issue's targets for the large brand (reported, not asserted by tests). */
function growthChecks(rows: Row[], memory: Array<Record<string, unknown>>) {
  const checks: Array<{ goal: string; row: string; value: string; met: boolean }> = [];
  for (const row of rows) {
    const name = `${row.operationLabel}, ${row.targetLabel}`;
    if ((row.operation === "growth-list" || row.operation === "growth-deep") && row.vsSmallBrand) {
      const { rps, p50 } = row.vsSmallBrand;
      checks.push({
        goal: "within 1.5 × the 20-stream list (req/s and p50)",
        row: name,
        value: `${rps.toFixed(2)}× req/s, ${p50.toFixed(2)}× p50`,
        met: rps >= 1 / 1.5 && p50 <= 1.5,
      });
    }
    if (row.operation === "growth-analytics")
      checks.push({ goal: "p50 < 1 s", row: name, value: `${row.p50.toFixed(0)} ms`, met: row.p50 < 1_000 });
  }
  for (const sample of memory) {
    const growth = sample.growthBytes as number;
    checks.push({
      goal: "RSS growth < 100 MB during analytics",
      row: String(sample.targetLabel),
      value: `${(growth / 1e6).toFixed(1)} MB`,
      met: growth < 100e6,
    });
  }
  return checks;
}

/** The growth rows as a Markdown table, each figure also divided by the same server's 20-stream list. */
export function growthTable(rows: Row[]): string {
  const header = [
    "operation",
    "target",
    "req/s",
    "p50 ms",
    "p99 ms",
    "req/s ÷ 20-stream",
    "p50 ÷ 20-stream",
    "p99 ÷ 20-stream",
    "non-2xx",
  ];
  const lines = rows.map((row) => [
    row.operationLabel,
    row.targetLabel,
    fixed(row.rps, row.rps < 10 ? 2 : 0),
    fixed(row.p50, 2),
    fixed(row.p99, 2),
    fixed(row.vsSmallBrand?.rps, 2),
    fixed(row.vsSmallBrand?.p50, 2),
    fixed(row.vsSmallBrand?.p99, 2),
    String(row.non2xx + row.errors),
  ]);
  return markdownTable(header, lines);
}

export function growthCheckLines(report: GrowthResult["report"]): string {
  const checks = report.checks as Array<{ goal: string; row: string; value: string; met: boolean }>;
  return checks
    .map(
      (check) =>
        `${check.met ? "met    " : "MISSED "} ${check.goal.padEnd(48)} ${check.value.padStart(22)}  ${check.row}`,
    )
    .join("\n");
}
