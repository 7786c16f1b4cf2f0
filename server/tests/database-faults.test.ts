// Database faults, for real: two server processes (server/main.ts, as `npm start` runs it) on a
// PostgreSQL cluster of the test's own, reached through a TCP proxy, under mixed load from several
// clients, while the cluster's backends are terminated, the cluster is restarted or stopped, and
// the proxy hangs. Whatever happens, the processes stay up, every answer is a success or the
// documented failure within the documented time-outs, nothing acknowledged is lost, every event
// is delivered, /readyz says 503 while the database is away, and both serve again by themselves.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, postgresSkipReason, streamBody } from "../../testkit/harness.ts";
import { type Answer, type MixedLoad, probeReadiness, send, startMixedLoad } from "../../testkit/mixed-load.ts";
import { clusterSkipReason, createCluster, type PgCluster } from "../../testkit/pg-cluster.ts";
import { type RunningProcess, runServer, serverOrigin, stop } from "../../testkit/server-process.ts";
import { startTcpProxy, type TcpProxy } from "../../testkit/tcp-proxy.ts";

const clusterReason = clusterSkipReason();
const skipped = postgresSkipReason() ?? (clusterReason ? `PostgreSQL fault tests skipped: ${clusterReason}.` : null);
if (skipped) console.log(skipped);

// The servers' time-outs (DATABASE_* settings, docs/operators.md). The acquire time-out keeps its
// default: it also bounds opening a connection, which a loaded machine can stretch past a second or
// two (then a healthy start-up fails). The others are smaller than their defaults, so a fault is
// over in seconds.
const ACQUIRE_TIMEOUT_MS = 5_000;
const STATEMENT_TIMEOUT_MS = 2_000;
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 5_000;
/** /readyz gives up on the database after this (docs/operators.md). */
const READINESS_TIMEOUT_MS = 2_000;
/** What a loaded 2-core machine adds to any wait: generous, since correctness is checked strictly. */
const SLACK_MS = 4_000;
/**
 * The longest an API request may take while the database fails: waiting for a connection, then a
 * statement and its rollback, each up to its time-out.
 */
const ANSWER_BOUND_MS = ACQUIRE_TIMEOUT_MS + 2 * STATEMENT_TIMEOUT_MS + SLACK_MS;
const PROBE_BOUND_MS = READINESS_TIMEOUT_MS + SLACK_MS / 2;
/** Longer than any bounded wait, so an answer that only comes once the database does is too late. */
const HANG_MS = ANSWER_BOUND_MS + 1_000;
/** How long each process may take to serve again once the database is back. */
const RECOVERY_MS = 15_000;
/** Deliveries claimed when the database failed wait out their lease (WEBHOOK_TIMEOUT_MS + 5 s) first. */
const DELIVERY_MS = 40_000;
const WEBHOOK_TIMEOUT_MS = 2_000;
const CLIENTS = 12;

const DATABASE = "lsh_faults";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A webhook receiver that answers 204 at once and notes each `type stream_id` it was sent. */
async function startReceiver() {
  const events = new Set<string>();
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
      const event = JSON.parse(raw) as { type: string; data: { stream_id: string } };
      events.add(`${event.type} ${event.data.stream_id}`);
      res.writeHead(204).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, events, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** What the spec allows each operation to answer when it succeeds. */
const SUCCESS: Record<string, number> = {
  createStream: 201,
  listStreams: 200,
  getStream: 200,
  endStream: 200,
  listWebhooks: 200,
  createWebhook: 201,
  deleteWebhook: 200,
};

/**
 * Why an answer breaks the contract under a database fault, or null: success, or 500 db_error, or
 * for GET /streams/{id} (which documents no 500) the 404 that says a failure stopped it.
 */
function violation(answer: Answer): string | null {
  const { operation, status, code, message } = answer;
  const ms = answer.endedAt - answer.startedAt;
  const what = `process ${answer.process} ${operation} → ${status || answer.failure} ${code ?? ""} after ${ms} ms`;
  if (status === 0) return `${what}: no HTTP answer`;
  if (ms > ANSWER_BOUND_MS) return `${what}: slower than ${ANSWER_BOUND_MS} ms`;
  if (status === SUCCESS[operation]) return null;
  if (status === 500 && code === "db_error") return null;
  // GET /streams/{id} documents no 500: its failed look-up is a 404 saying so.
  const lookup = operation === "getStream";
  if (lookup && status === 404 && code === "not_found" && /^A server-side failure stopped this/.test(message ?? ""))
    return null;
  return `${what}: neither a success nor the documented failure (${message})`;
}

function probeViolation(probe: Answer): string | null {
  const ms = probe.endedAt - probe.startedAt;
  const what = `process ${probe.process} /readyz → ${probe.status || probe.failure} after ${ms} ms`;
  if (probe.status !== 200 && probe.status !== 503) return what;
  if (ms > PROBE_BOUND_MS) return `${what}: slower than ${PROBE_BOUND_MS} ms`;
  return null;
}

/** Runs `work` `limit` at a time. */
async function inBatches<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += limit)
    results.push(...(await Promise.all(items.slice(i, i + limit).map(work))));
  return results;
}

describe.skipIf(skipped !== null)("two server processes on a PostgreSQL cluster that fails under them", () => {
  let cluster: PgCluster;
  let proxy: TcpProxy;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let servers: RunningProcess[] = [];
  let bases: string[] = [];
  let key: string;

  const outputs = () =>
    servers.map((server, i) => `--- process ${i} stderr (tail):\n${server.stderr().slice(-3_000)}`).join("\n");

  function expectAlive(): void {
    const exits = servers.map((server, i) => ({
      process: i,
      code: server.child.exitCode,
      signal: server.child.signalCode,
    }));
    expect(
      exits.filter(({ code, signal }) => code !== null || signal !== null),
      `a server process exited\n${outputs()}`,
    ).toEqual([]);
  }

  beforeAll(async () => {
    cluster = await createCluster();
    await cluster.createDatabase(DATABASE);
    proxy = await startTcpProxy(cluster.port);
    receiver = await startReceiver();
    const env = {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${proxy.port}/${DATABASE}`,
      DATABASE_POOL_ACQUIRE_TIMEOUT_MS: String(ACQUIRE_TIMEOUT_MS),
      DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: String(IDLE_IN_TRANSACTION_TIMEOUT_MS),
      ADMIN_TOKEN,
      SWEEP_INTERVAL_MS: "200",
      WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
      WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
      WEBHOOK_RETRY_SCHEDULE_MS: "200,500,1000,2000,3000",
      LOG_LEVEL: "warn",
    };
    servers = [runServer(env), runServer(env)];
    bases = await Promise.all(servers.map((server) => serverOrigin(server)));

    const admin = (method: string, path: string, body: unknown) =>
      send(bases[0]!, method, `/admin/v1${path}`, { key: ADMIN_TOKEN, body, timeoutMs: 30_000 });
    const brand = await admin("POST", "/brands", {
      name: "Database faults",
      vertical: "live-commerce",
      plan: "growth",
      rate_limit_per_minute: 1_000_000,
      max_active_streams: 100_000,
    });
    expect(brand.status).toBe(201);
    const scopes = ["streams:read", "streams:write", "analytics:read", "webhooks:write"];
    const created = await admin("POST", "/keys", {
      brand_id: brand.body.brand_id,
      name: "faults",
      environment: "test",
      scopes,
    });
    expect(created.status).toBe(201);
    key = created.body.key;
    const hook = await send(bases[0]!, "POST", "/api/v1/webhooks", {
      key,
      body: { url: `${receiver.origin}/hooks`, events: ["stream.started", "stream.ended"] },
      timeoutMs: 30_000,
    });
    expect(hook.status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(
      servers.map(async (server) => {
        // A process that cannot stop cleanly is killed rather than left behind.
        const killer = setTimeout(() => server.child.kill("SIGKILL"), 20_000);
        await stop(server);
        clearTimeout(killer);
      }),
    );
    await receiver?.close();
    await proxy?.close();
    await cluster?.cleanup();
  }, 60_000);

  interface Faulted {
    load: MixedLoad;
    probes: Answer[];
    faultStart: number;
    faultEnd: number;
  }

  /** Mixed load and readiness probes on both processes, with `fault` in the middle. */
  async function underLoad(fault: () => Promise<void>): Promise<Faulted> {
    const spareHookUrl = `${receiver.origin}/spare`;
    const load = startMixedLoad({
      bases,
      key,
      spareHookUrl,
      clients: CLIENTS,
      pauseMs: 50,
      timeoutMs: ANSWER_BOUND_MS + 20_000,
    });
    const readiness = probeReadiness({ bases, everyMs: 200, timeoutMs: PROBE_BOUND_MS + 20_000 });
    await sleep(1_500);
    const faultStart = Date.now();
    await fault();
    const faultEnd = Date.now();
    await sleep(2_000);
    await Promise.all([load.stop(), readiness.stop()]);
    return { load, probes: readiness.probes, faultStart, faultEnd };
  }

  /** An API request with the tenant's key, given up after the bound. */
  const api = (base: string, method: string, path: string, body?: unknown) =>
    send(base, method, path, { key, body, timeoutMs: ANSWER_BOUND_MS });

  /** Calls `attempt` until `done` says its answer is right, for at most `ms`; returns the last answer. */
  async function retryFor<T>(ms: number, attempt: () => Promise<T>, done: (answer: T) => boolean): Promise<T> {
    const deadline = Date.now() + ms;
    let answer = await attempt();
    while (!done(answer) && Date.now() < deadline) {
      await sleep(250);
      answer = await attempt();
    }
    return answer;
  }

  /**
   * Each process serves again by itself: /readyz 200 and a first answered list within
   * RECOVERY_MS, then five starts, reads and lists in a row, all answered. Returns the streams started.
   */
  async function expectServingAgain(): Promise<string[]> {
    const started: string[] = [];
    for (const [process, base] of bases.entries()) {
      const ready = await retryFor(
        RECOVERY_MS,
        () => send(base, "GET", "/readyz", { timeoutMs: PROBE_BOUND_MS }),
        (answer) => answer.status === 200,
      );
      expect(ready.status, `process ${process} /readyz after the fault: ${JSON.stringify(ready.body)}`).toBe(200);
      const first = await retryFor(
        RECOVERY_MS,
        () => api(base, "GET", "/api/v1/streams"),
        (answer) => answer.status === 200,
      );
      expect(first.status, `process ${process} after the fault`).toBe(200);
      for (let i = 0; i < 5; i++) {
        const start = await api(base, "POST", "/api/v1/streams", streamBody());
        expect(start.status, `process ${process} after the fault: ${JSON.stringify(start.body)}`).toBe(201);
        started.push(start.body.stream_id);
        expect((await api(base, "GET", `/api/v1/streams/${start.body.stream_id}`)).status).toBe(200);
        expect((await api(base, "GET", "/api/v1/streams?limit=5")).status).toBe(200);
      }
    }
    return started;
  }

  /** Every 201'd stream reads 200, ended if its end was answered 200; returns their statuses. */
  async function expectStreamsKept(created: string[], ended: Set<string>): Promise<Map<string, string>> {
    const read = await inBatches(created, 8, async (id) => ({
      id,
      answer: await api(bases[0]!, "GET", `/api/v1/streams/${id}`),
    }));
    const unreadable = read
      .filter(({ answer }) => answer.status !== 200)
      .map(({ id, answer }) => `${id}: ${answer.status || answer.failure} ${answer.code}`);
    expect(unreadable, "201'd streams that cannot be read").toEqual([]);
    const statuses = new Map(read.map(({ id, answer }) => [id, answer.body.status as string]));
    expect(
      [...ended].filter((id) => statuses.get(id) !== "ended"),
      "streams ended with 200 that are not ended",
    ).toEqual([]);
    return statuses;
  }

  /** stream.started for every stream, stream.ended for every ended one, at the receiver within DELIVERY_MS. */
  async function expectEventsDelivered(statuses: Map<string, string>): Promise<number> {
    const expected = [...statuses].flatMap(([id, status]) => [
      `stream.started ${id}`,
      ...(status === "ended" ? [`stream.ended ${id}`] : []),
    ]);
    const missing = () => expected.filter((event) => !receiver.events.has(event));
    await retryFor(
      DELIVERY_MS,
      async () => missing().length,
      (left) => left === 0,
    );
    expect(missing(), `events not delivered within ${DELIVERY_MS} ms`).toEqual([]);
    return expected.length;
  }

  /**
   * What every fault must leave: both processes up; every answer a success or the documented
   * failure, in time; requests caught in the fault; each process serving again by itself; every
   * 201'd stream kept; an event delivered for every start and every end.
   */
  async function expectSurvived(name: string, { load, probes, faultStart, faultEnd }: Faulted): Promise<void> {
    expectAlive();
    expect(load.answers.map(violation).filter(Boolean), outputs()).toEqual([]);
    expect(probes.map(probeViolation).filter(Boolean)).toEqual([]);
    const caught = load.answers.filter((answer) => answer.startedAt <= faultEnd && answer.endedAt >= faultStart);
    expect(caught.length, "no request was in flight during the fault").toBeGreaterThan(0);

    const created = [...load.created, ...(await expectServingAgain())];
    const delivered = await expectEventsDelivered(await expectStreamsKept(created, load.ended));
    expectAlive();

    const count = (answers: Answer[], status: number) => answers.filter((answer) => answer.status === status).length;
    const slowest = Math.max(...load.answers.map((answer) => answer.endedAt - answer.startedAt));
    console.log(
      `${name}: ${load.answers.length} answers (${caught.length} caught in the fault; ${count(load.answers, 500)} × 500 db_error, ` +
        `${count(load.answers, 404)} × 404; slowest ${slowest} ms), ${created.length} streams, ${delivered} events delivered, ` +
        `/readyz ${count(probes, 200)} × 200 and ${count(probes, 503)} × 503`,
    );
  }

  /** Probes of `process` that started at or after `from` and were answered by `to`. */
  const probesWithin = (probes: Answer[], process: number, from: number, to: number) =>
    probes.filter((probe) => probe.process === process && probe.startedAt >= from && probe.endedAt <= to);

  // A terminated backend and a fast restart are over at once (the probe's own connection is
  // made again straight away), so /readyz may stay 200 through them: only a cluster that stays
  // down and a hang must show 503.
  it("every backend of the database terminated 5 times, 1 s apart", async () => {
    const terminated: number[] = [];
    const faulted = await underLoad(async () => {
      for (let round = 0; round < 5; round++) {
        terminated.push(await cluster.terminateAll(DATABASE));
        await sleep(1_000);
      }
    });
    await expectSurvived("terminated backends", faulted);
    // Each round found connections to cut: the servers had reconnected after the one before.
    expect(
      terminated.filter((count) => count === 0),
      `backends terminated per round: ${terminated}`,
    ).toEqual([]);
  }, 150_000);

  it("a fast restart of the cluster (pg_ctl restart -m fast)", async () => {
    await expectSurvived("fast restart", await underLoad(() => cluster.restart()));
  }, 150_000);

  it("the cluster stopped for 3.5 s (pg_ctl stop -m fast, then start): /readyz 503 meanwhile", async () => {
    let down = 0;
    let up = 0;
    const faulted = await underLoad(async () => {
      await cluster.stop();
      down = Date.now();
      await sleep(3_500);
      up = Date.now();
      await cluster.start();
    });
    await expectSurvived("cluster down", faulted);
    for (const process of bases.keys()) {
      const during = probesWithin(faulted.probes, process, down, up);
      expect(during.length, `process ${process}: no /readyz answered while the cluster was down`).toBeGreaterThan(0);
      expect(during.map((probe) => probe.status)).toEqual(during.map(() => 503));
    }
  }, 150_000);

  it(`a database that hangs for ${HANG_MS / 1000} s (the proxy holds every byte), then resumes`, async () => {
    let pausedAt = 0;
    let resumedAt = 0;
    const faulted = await underLoad(async () => {
      proxy.pause();
      pausedAt = Date.now();
      await sleep(HANG_MS);
      resumedAt = Date.now();
      proxy.resume();
    });
    await expectSurvived("hang", faulted);
    for (const process of bases.keys()) {
      // Answered during the hang, not once it was over: within the time-outs.
      const answered = faulted.load.answers.filter(
        (answer) => answer.process === process && answer.startedAt >= pausedAt && answer.endedAt < resumedAt,
      );
      expect(answered.length, `process ${process}: no API request was answered during the hang`).toBeGreaterThan(0);
      const during = probesWithin(faulted.probes, process, pausedAt, resumedAt);
      expect(during.length, `process ${process}: no /readyz answered during the hang`).toBeGreaterThan(0);
      expect(during.map((probe) => probe.status)).toEqual(during.map(() => 503));
    }
  }, 150_000);
});
