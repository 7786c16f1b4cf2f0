import { randomBytes, randomUUID } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { ALL_SCOPES, type Stream } from "../../server/domain/types.ts";
import { recordStreamEvent } from "../../server/services/events.ts";
import { createBrand, createKey } from "../../server/services/operator.ts";
import { seedCreators, stockCreators } from "../../server/store/creators.ts";
import { type Database, openDatabase } from "../../server/store/database.ts";
import { migrate } from "../../server/store/migrate.ts";
import { insertWebhook } from "../../server/store/webhooks.ts";
import { scratchPostgresDatabase } from "../../testkit/harness.ts";
import { type Measurement, run, summarise } from "./load.ts";
import { OPERATIONS } from "./operations.ts";
import { fixed, markdownTable, type Ratios, type Row } from "./report.ts";
import { type RealServer, startRealServer } from "./targets.ts";
import { prepareTenant, type Tenant } from "./tenant.ts";

/** The brands' webhook counts compared, and the backlog drained for the throughput figure. */
export const FEW_WEBHOOKS = 1;
// 16: the most webhooks a brand may have in a mode (POST /webhooks answers 429 webhook_limit past it).
export const MANY_WEBHOOKS = 16;
export const BACKLOG = 10_000;

export type FanOutOperationId = "cycle-webhooks-1" | "cycle-webhooks-16";

/** The receiving end: answers 204 at once, counts what arrives and when, and notes repeats of one (event, webhook). */
export async function startFastReceiver() {
  const seen = new Set<string>();
  let received = 0;
  let repeats = 0;
  let first = 0;
  let last = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const now = performance.now();
      if (received === 0) first = now;
      last = now;
      received += 1;
      const key = `${request.url} ${(JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: string }).id}`;
      if (seen.has(key)) repeats += 1;
      else seen.add(key);
      response.writeHead(204).end();
    });
  });
  // As a receiver on another host would: keep a connection longer than the sender does.
  server.keepAliveTimeout = 10_000;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    counts: () => ({ received, repeats, first, last }),
    reset() {
      seen.clear();
      received = repeats = first = last = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Receiver = Awaited<ReturnType<typeof startFastReceiver>>;

/** The receiving end must be reachable over plain http on 127.0.0.1, as for local development (docs/operators.md). */
const SERVER_ENV = { WEBHOOK_ALLOW_HOSTS: "127.0.0.1" };

async function registerWebhooks(
  server: RealServer,
  tenant: Tenant,
  receiver: Receiver,
  count: number,
  label: string,
): Promise<void> {
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${server.url}/api/v1/webhooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
      body: JSON.stringify({
        url: receiver.url(`/${label}/${i}`),
        events: ["stream.started", "stream.ended", "stream.error"],
      }),
    });
    if (response.status !== 201)
      throw new Error(`registering a webhook answered ${response.status}: ${await response.text()}`);
  }
}

export interface DrainResult {
  engine: string;
  webhooks: number;
  events: number;
  deliveries: number;
  received: number;
  repeats: number;
  /** From the first delivery's arrival to the last's. */
  seconds: number;
  perSecond: number;
  drained: boolean;
}

/**
 * A brand with `webhooks` webhooks and events enough for BACKLOG deliveries, written into the
 * database before the server starts (as if it had been down), each event recorded by the
 * server's own `recordStreamEvent`; then the real server (`server/main.ts`) drains it, timed at the
 * receiver from the first arrival to the last.
 */
async function drainBacklog(
  engine: "pglite" | "postgres",
  webhooks: number,
  receiver: Receiver,
  postgresUrl: string | undefined,
  limitSeconds: number,
): Promise<DrainResult> {
  const events = Math.ceil(BACKLOG / webhooks);
  const dataDir = engine === "pglite" ? mkdtempSync(join(tmpdir(), "lsh-bench-fanout-")) : "";
  const scratch = engine === "postgres" ? await scratchPostgresDatabase(postgresUrl!, "lsh_bench_fanout") : null;
  let server: RealServer | undefined;
  try {
    const db = scratch ? await openDatabase(scratch.url) : await openDatabase(undefined, { dataDir });
    try {
      await seedBacklog(db, { webhooks, events, receiver });
    } finally {
      await db.close();
    }
    receiver.reset();
    const started = performance.now();
    server = await startRealServer({
      databaseUrl: scratch ? scratch.url : "",
      env: { ...SERVER_ENV, ...(scratch ? {} : { DATA_DIR: dataDir }) },
      label: `real server (${engine === "pglite" ? "PGlite on disk" : "PostgreSQL"})`,
    });
    const expected = events * webhooks;
    while (receiver.counts().received < expected && performance.now() - started < limitSeconds * 1000)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const { received, repeats, first, last } = receiver.counts();
    const seconds = received > 1 ? (last - first) / 1000 : Number.NaN;
    return {
      engine: server.label,
      webhooks,
      events,
      deliveries: expected,
      received,
      repeats,
      seconds,
      perSecond: (received - 1) / seconds,
      drained: received >= expected,
    };
  } finally {
    await server?.stop();
    await scratch?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

async function seedBacklog(
  db: Database,
  { webhooks, events, receiver }: { webhooks: number; events: number; receiver: Receiver },
): Promise<void> {
  await migrate(db);
  await seedCreators(db);
  const now = new Date();
  const brand = await db.transaction((tx) =>
    createBrand(tx, { name: "Benchmark brand, backlog", vertical: "live-commerce", plan: "growth" }, now),
  );
  await createKey(db, { brand_id: brand.id, name: "benchmark", environment: "test", scopes: [...ALL_SCOPES] }, now);
  for (let i = 0; i < webhooks; i++) {
    await insertWebhook(db, {
      id: randomUUID(),
      brandId: brand.id,
      mode: "test",
      url: receiver.url(`/backlog/${i}`),
      events: ["stream.started", "stream.ended", "stream.error"],
      secret: `whsec_${randomBytes(32).toString("base64url")}`,
      createdAt: now,
    });
  }
  const creator = stockCreators()[0]!.id;
  // Only the fields an event carries; the stream row itself is not needed to deliver its events.
  const stream = (): Stream =>
    ({
      id: randomUUID(),
      brandId: brand.id,
      mode: "test",
      status: "live",
      creatorPublicId: creator,
      platform: "youtube",
      vertical: "live-commerce",
    }) as Stream;
  for (let done = 0; done < events; done += 500) {
    await db.transaction(async (tx) => {
      for (let i = done; i < Math.min(events, done + 500); i++)
        await recordStreamEvent(tx, "stream.started", stream(), new Date(now.getTime() + i));
    });
  }
}

export interface FanOutResult {
  rows: Row[];
  report: Record<string, unknown>;
}

/**
 * The fan-out rows. On each engine, one real server with two benchmark brands, one with 1 webhook
 * and one with 50, every webhook on the fast receiver for all three event types: create-then-end
 * for each brand (warm-up, then rounds taken in turn), the 50-webhook figures divided by the
 * 1-webhook ones; the deliveries go out while the rows run, as they would in production. Then,
 * per engine and webhook count, a backlog of 10,000 deliveries drained by a freshly started server.
 */
export async function measureFanOut({
  postgresUrl,
  duration,
  warmup,
  connections,
  drainLimitSeconds = 180,
}: {
  /** A PostgreSQL server on which scratch databases are made (dropped afterwards); none: PGlite only. */
  postgresUrl?: string;
  duration: number;
  warmup: number;
  connections: number;
  drainLimitSeconds?: number;
}): Promise<FanOutResult> {
  const started = Date.now();
  const receiver = await startFastReceiver();
  const rows: Row[] = [];
  const drains: DrainResult[] = [];
  try {
    const engines: Array<"pglite" | "postgres"> = postgresUrl ? ["pglite", "postgres"] : ["pglite"];
    const cycle = OPERATIONS.find((operation) => operation.id === "cycle")!;
    for (const engine of engines) {
      const scratch = engine === "postgres" ? await scratchPostgresDatabase(postgresUrl!, "lsh_bench_fanout") : null;
      const server = await startRealServer({
        databaseUrl: scratch ? scratch.url : "memory:",
        env: SERVER_ENV,
        label: `real server (${engine === "pglite" ? "PGlite" : "PostgreSQL"})`,
      });
      try {
        const brands = [
          { id: "cycle-webhooks-1" as const, webhooks: FEW_WEBHOOKS, tenant: await prepareTenant(server) },
          { id: "cycle-webhooks-16" as const, webhooks: MANY_WEBHOOKS, tenant: await prepareTenant(server) },
        ];
        for (const brand of brands) await registerWebhooks(server, brand.tenant, receiver, brand.webhooks, brand.id);
        console.log(
          `\nFan-out rows on ${server.label}: create-then-end, ${connections} connections, with ${FEW_WEBHOOKS} and with ${MANY_WEBHOOKS} webhooks on a local receiver answering 204 at once`,
        );
        const load = (tenant: Tenant, seconds: number) =>
          run({ url: server.url, requests: cycle.requests(server, tenant), connections, duration: seconds });
        for (const brand of brands) await load(brand.tenant, warmup);
        const rounds = Math.max(1, Math.round(duration / 2));
        const runs = new Map(brands.map((brand) => [brand, [] as Awaited<ReturnType<typeof run>>[]]));
        receiver.reset();
        const measuring = performance.now();
        for (let round = 0; round < rounds; round++)
          for (const brand of brands) runs.get(brand)!.push(await load(brand.tenant, duration / rounds));
        const deliveredWhileMeasuring = receiver.counts().received;
        const measured = (performance.now() - measuring) / 1000;
        const results = brands.map((brand) => ({ brand, result: summarise(runs.get(brand)!) }));
        for (const { brand, result } of results) {
          const few = results[0]!.result;
          const row: Row = {
            ...result,
            operation: brand.id,
            operationLabel: `POST + DELETE /streams/{id}, ${brand.webhooks} webhook${brand.webhooks === 1 ? "" : "s"}`,
            target: "real",
            targetLabel: server.label,
            vsFramework: null,
            vsPrism: null,
            ...(brand.webhooks === MANY_WEBHOOKS ? { vsOneWebhook: ratios(result, few) } : {}),
          };
          rows.push(row);
          console.log(
            `  ${row.operationLabel.padEnd(42)} ${result.rps.toFixed(0).padStart(6)} req/s  p50 ${result.p50.toFixed(2)} ms  p99 ${result.p99.toFixed(2)} ms${result.non2xx + result.errors ? `  (${result.non2xx} non-2xx, ${result.errors} errors)` : ""}`,
          );
        }
        console.log(
          `  deliveries received while the rows ran: ${deliveredWhileMeasuring} in ${measured.toFixed(1)} s (${(deliveredWhileMeasuring / measured).toFixed(0)}/s)`,
        );
      } finally {
        await server.stop();
        await scratch?.drop();
      }
      for (const webhooks of [FEW_WEBHOOKS, MANY_WEBHOOKS]) {
        const drained = await drainBacklog(engine, webhooks, receiver, postgresUrl, drainLimitSeconds);
        drains.push(drained);
        console.log(
          `  backlog of ${drained.deliveries.toLocaleString("en")} deliveries (${drained.events.toLocaleString("en")} events × ${webhooks} webhook${webhooks === 1 ? "" : "s"}), ${drained.engine}: ${drained.drained ? "drained" : `NOT drained after ${drainLimitSeconds} s (${drained.received} received)`} in ${drained.seconds.toFixed(1)} s, ${drained.perSecond.toFixed(0)} deliveries/s; ${drained.repeats} repeated`,
        );
      }
    }
  } finally {
    await receiver.close();
  }
  return {
    rows,
    report: {
      backlog: BACKLOG,
      drains,
      checks: fanOutChecks(rows, drains),
      loadAverageAfter: loadavg(),
      elapsedSeconds: (Date.now() - started) / 1000,
    },
  };
}

function ratios(row: Measurement, reference: Measurement): Ratios {
  return { rps: row.rps / reference.rps, p50: row.p50 / reference.p50, p99: row.p99 / reference.p99 };
}

/** The issue's targets (reported, not asserted by tests). */
function fanOutChecks(rows: Row[], drains: DrainResult[]) {
  const checks: Array<{ goal: string; row: string; value: string; met: boolean }> = [];
  for (const row of rows) {
    if (!row.vsOneWebhook) continue;
    const { rps, p50 } = row.vsOneWebhook;
    checks.push({
      goal: `create-then-end with ${MANY_WEBHOOKS} webhooks within 1.2 × the 1-webhook figure`,
      row: row.targetLabel,
      value: `${rps.toFixed(2)}× req/s, ${p50.toFixed(2)}× p50`,
      met: rps >= 1 / 1.2 && p50 <= 1.2,
    });
  }
  for (const drain of drains) {
    checks.push({
      goal: `≥ 500 deliveries/s draining ${BACKLOG.toLocaleString("en")} (${drain.webhooks} webhook${drain.webhooks === 1 ? "" : "s"})`,
      row: drain.engine,
      value: `${drain.perSecond.toFixed(0)}/s`,
      met: drain.drained && drain.perSecond >= 500,
    });
  }
  return checks;
}

export function fanOutTable(rows: Row[]): string {
  const header = [
    "operation",
    "target",
    "req/s",
    "p50 ms",
    "p99 ms",
    "req/s ÷ 1 webhook",
    "p50 ÷ 1 webhook",
    "p99 ÷ 1 webhook",
    "non-2xx",
  ];
  return markdownTable(
    header,
    rows.map((row) => [
      row.operationLabel,
      row.targetLabel,
      fixed(row.rps, 0),
      fixed(row.p50, 2),
      fixed(row.p99, 2),
      fixed(row.vsOneWebhook?.rps, 2),
      fixed(row.vsOneWebhook?.p50, 2),
      fixed(row.vsOneWebhook?.p99, 2),
      String(row.non2xx + row.errors),
    ]),
  );
}

export function drainTable(report: FanOutResult["report"]): string {
  const drains = report.drains as DrainResult[];
  return markdownTable(
    ["target", "webhooks", "events", "deliveries", "seconds", "deliveries/s", "repeated"],
    drains.map((drain) => [
      drain.engine,
      String(drain.webhooks),
      drain.events.toLocaleString("en"),
      drain.drained
        ? drain.deliveries.toLocaleString("en")
        : `${drain.received.toLocaleString("en")} of ${drain.deliveries.toLocaleString("en")}`,
      fixed(drain.seconds, 1),
      fixed(drain.perSecond, 0),
      String(drain.repeats),
    ]),
  );
}

export function fanOutCheckLines(report: FanOutResult["report"]): string {
  const checks = report.checks as Array<{ goal: string; row: string; value: string; met: boolean }>;
  return checks
    .map(
      (check) =>
        `${check.met ? "met    " : "MISSED "} ${check.goal.padEnd(62)} ${check.value.padStart(22)}  ${check.row}`,
    )
    .join("\n");
}
