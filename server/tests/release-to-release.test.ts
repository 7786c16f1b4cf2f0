/**
 * Release to release, as an operator upgrades and rolls back: the release this checkout must roll
 * with (testkit/previous-release.ts: the newest in contract/released/ at or below package.json's
 * version, checked out from git into a worktree and built there) and this checkout, each run as
 * `node server/main.ts`, under a steady mixed load of starts, reads, ends and webhook deliveries.
 *
 * - PostgreSQL: two processes of the previous release on one database; each replaced by one of
 *   this checkout, one at a time (the new one started and put in rotation once ready, the old one
 *   taken out, then SIGTERM), then rolled back the same way. No request may fail, every write
 *   answered must be in the database (and nothing else), every event delivered at least once.
 * - The embedded database (one process per DATA_DIR): the previous release stopped and this
 *   checkout started on its directory and port, then back. The clients retry what gets no answer
 *   meanwhile (refused connections): those retries are counted and the downtime is measured, from
 *   the first request refused to the first answered after. Nothing else may fail or be lost.
 *
 * It runs in CI's PostgreSQL leg (TEST_DATABASE_URL set), both parts; without TEST_DATABASE_URL,
 * without git history, or when lint:migrations finds the pair needs the old processes stopped
 * first (a contracting release), it says so and is skipped. Figures are printed, for
 * docs/operators.md ("Upgrades").
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkMigrations, describeReport, MigrationLintError } from "../../scripts/migration-lint.ts";
import { adminClient, createBrand, createKey } from "../cli/admin-client.ts";
import { testDatabaseUrl } from "../config.ts";
import { ALL_SCOPES } from "../domain/types.ts";
import { openDatabase } from "../store/database.ts";
import { ADMIN_TOKEN, postgresSkipReason, scratchPostgresDatabase } from "../../testkit/harness.ts";
import { send } from "../../testkit/mixed-load.ts";
import { type BuiltRelease, buildRelease, rollingPartner, serverChangesSince } from "../../testkit/previous-release.ts";
import {
  type Backend,
  type LoadAnswer,
  type RollingLoad,
  Rotation,
  startRollingLoad,
} from "../../testkit/rolling-load.ts";
import { ROOT, type RunningProcess, runServer, serverOrigin, stop } from "../../testkit/server-process.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The migrations this checkout adds since the partner release (none makes the old processes print anything). */
let addedMigrations: string[] = [];

/** Why this file is skipped, or null. */
async function whySkipped(): Promise<string | null> {
  if (postgresSkipReason())
    return "Release-to-release test skipped: TEST_DATABASE_URL is not set; it runs in CI's PostgreSQL leg (.ci/run sets it), both engines.";
  let partner: ReturnType<typeof rollingPartner>;
  try {
    partner = rollingPartner();
  } catch (error) {
    if (error instanceof MigrationLintError) return `Release-to-release test skipped: ${error.message}`;
    throw error;
  }
  const report = await checkMigrations({ root: ROOT, previous: partner });
  const { lines, passed } = describeReport(report);
  if (!passed || report.contracting.length > 0 || report.addedUnderPreparedStar.length > 0)
    return `Release-to-release test skipped: ${partner.version} (${partner.commit.slice(0, 7)}) and this checkout do not run side by side, as lint:migrations says:\n${lines.join("\n")}`;
  addedMigrations = report.added;
  return null;
}

const skipped = await whySkipped();
if (skipped) console.log(skipped);

/** Settings of every process, either release. */
const SERVER_ENV = {
  ADMIN_TOKEN,
  HOST: "127.0.0.1",
  WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
  WEBHOOK_RETRY_SCHEDULE_MS: "200,400,800,1600,3200",
  SIM_AGENT_JOIN_MS: "200",
  SWEEP_INTERVAL_MS: "100",
  LOG_LEVEL: "warn",
};

/** A balancer's deregistration delay: between taking a process out of rotation and its SIGTERM. */
const DEREGISTRATION_MS = 250;
/** Load between two steps (a process added or taken away). */
const STEP_MS = 3_000;

/**
 * A webhook receiver noting each event once per delivery; the first attempt of every tenth event
 * it sees is answered 500, so retries run across the replacements too.
 */
async function startReceiver() {
  const delivered = new Map<string, number>();
  const attempts = new Map<string, number>();
  let failedFirst = 0;
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
      const event = JSON.parse(raw) as { id: string; type: string; data: { stream_id: string } };
      const attempt = (attempts.get(event.id) ?? 0) + 1;
      attempts.set(event.id, attempt);
      if (attempt === 1 && attempts.size % 10 === 0) {
        failedFirst++;
        res.writeHead(500).end();
        return;
      }
      const line = `${event.type} ${event.data.stream_id}`;
      delivered.set(line, (delivered.get(line) ?? 0) + 1);
      res.writeHead(204).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    delivered,
    failedFirst: () => failedFirst,
    /** Forgets what it received (each test counts its own). */
    reset() {
      delivered.clear();
      attempts.clear();
      failedFirst = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** Two brands, each with a test and a live key and a webhook per mode to the receiver. */
async function provision(base: string, receiverUrl: string) {
  const operator = adminClient(`${base}/admin/v1`, ADMIN_TOKEN);
  const keys: { key: string; mode: "test" | "live" }[] = [];
  const brandIds: string[] = [];
  for (let n = 0; n < 2; n++) {
    const brand = await createBrand(operator, {
      name: `Rolling ${n}`,
      vertical: "live-commerce",
      plan: "enterprise",
      credits_cents: 100_000_000,
      plan_minutes: 1_000_000,
      rate_limit_per_minute: 1_000_000,
      max_active_streams: 10_000,
    });
    brandIds.push(brand.brand_id);
    for (const mode of ["test", "live"] as const) {
      const { key } = await createKey(operator, {
        brand_id: brand.brand_id,
        name: `rolling ${mode}`,
        environment: mode,
        scopes: [...ALL_SCOPES],
        expires_at: null,
      });
      const hook = await send(base, "POST", "/api/v1/webhooks", {
        key,
        body: { url: receiverUrl, events: ["stream.started", "stream.ended", "stream.error"] },
        timeoutMs: 10_000,
      });
      expect(hook.status, JSON.stringify(hook.body)).toBe(201);
      keys.push({ key, mode });
    }
  }
  return { keys, brandIds };
}

interface Process extends Backend {
  server: RunningProcess;
}

/** `node server/main.ts` of `release` (a checkout), once it answers 200 on /readyz. */
async function startProcess(name: string, cwd: string, env: Record<string, string>): Promise<Process> {
  const server = runServer({ ...SERVER_ENV, ...env }, cwd);
  try {
    const base = await serverOrigin(server, 120_000);
    for (let n = 0; ; n++) {
      const ready = await send(base, "GET", "/readyz", { timeoutMs: 5_000 });
      if (ready.status === 200) break;
      if (n > 100) throw new Error(`${name} is not ready: ${JSON.stringify(ready)}`);
      await sleep(100);
    }
    return { name, base, server };
  } catch (error) {
    await stop(server, "SIGKILL");
    throw error;
  }
}

/** SIGTERM and its exit; what the process said it answered while stopping. */
async function stopProcess(process: Process): Promise<{ code: number | null; answeredWhileStopping: number }> {
  process.server.child.kill("SIGTERM");
  const { code } = await process.server.exited;
  const answered = /requests: (\d+) answered while stopping/.exec(process.server.stdout());
  return { code, answeredWhileStopping: Number(answered?.[1] ?? Number.NaN) };
}

/** Every answer that is not a 2xx (none is expected: the load sends nothing the API refuses). */
function failuresOf(load: RollingLoad) {
  return load.answers
    .filter((answer) => answer.status < 200 || answer.status >= 300)
    .map(
      (answer) =>
        `${new Date(answer.startedAt).toISOString()} ${answer.operation} via ${answer.backend}: ${answer.status || answer.failure} ${answer.code ?? ""}`,
    );
}

/** Requests per operation and per backend, for the printed figures. */
function tally(load: RollingLoad, by: (answer: RollingLoad["answers"][number]) => string) {
  const counts: Record<string, number> = {};
  for (const answer of load.answers) counts[by(answer)] = (counts[by(answer)] ?? 0) + 1;
  return counts;
}

/** The events the acknowledged writes made: `stream.started` per start, `stream.ended` per end. */
function expectedEvents(load: RollingLoad): string[] {
  return [
    ...load.started.map((write) => `stream.started ${write.id}`),
    ...load.ended.map((write) => `stream.ended ${write.id}`),
  ];
}

/** Waits until the receiver has every expected event and the database has no delivery left to make. */
async function allDelivered(receiver: Receiver, expected: string[], pendingDeliveries: () => Promise<number>) {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const missing = expected.filter((line) => !receiver.delivered.has(line));
    const pending = await pendingDeliveries();
    if ((missing.length === 0 && pending === 0) || Date.now() > deadline) return { missing, pending };
    await sleep(250);
  }
}

describe.skipIf(skipped !== null)("release to release", () => {
  let release: BuiltRelease;
  let receiver: Receiver;
  const running: Process[] = [];
  let scratch: string;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "lsh-release-test-"));
    release = await buildRelease(rollingPartner());
    const changed = serverChangesSince(release.commit);
    console.log(
      `release to release: ${release.version} at ${release.commit.slice(0, 7)} (${release.found}), checked out and built in ${(release.buildMs / 1000).toFixed(1)} s (${release.dependencies}), beside this checkout (${ROOT}); ` +
        `server files changed since: ${changed.length === 0 ? "none (the same server code)" : changed.join(", ")}`,
    );
    receiver = await startReceiver();
  }, 600_000);

  afterAll(async () => {
    await Promise.all(running.map((process) => stop(process.server, "SIGKILL")));
    await receiver?.close();
    await release?.remove();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }, 120_000);

  /** A process of the previous release or of this checkout, kept for afterAll. */
  const launch = async (which: "previous" | "current", n: number, env: Record<string, string>) => {
    const name =
      which === "previous" ? `${release.version}@${release.commit.slice(0, 7)} #${n}` : `this checkout #${n}`;
    const process = await startProcess(name, which === "previous" ? release.dir : ROOT, env);
    running.push(process);
    return process;
  };

  it("on one PostgreSQL: two previous-release processes replaced by this checkout's one at a time, then rolled back, under load: no request failed, every acknowledged write kept, every event delivered", {
    timeout: 600_000,
  }, async () => {
    const began = Date.now();
    const database = await scratchPostgresDatabase(testDatabaseUrl()!, "lsh_release");
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    try {
      const env = { DATABASE_URL: database.url };
      // The previous release makes the database, as it was before the upgrade.
      const first = await launch("previous", 1, env);
      const second = await launch("previous", 2, env);
      const rotation = new Rotation();
      rotation.add(first);
      rotation.add(second);
      const { keys, brandIds } = await provision(first.base, receiver.url);
      const load = startRollingLoad({ rotation, keys, clients: 8, pauseMs: 50, timeoutMs: 15_000 });
      const stops: { name: string; code: number | null; answeredWhileStopping: number }[] = [];
      let live = [first, second];

      /** Starts `which`'s process, puts it in rotation, takes `out` away and stops it. */
      const replace = async (out: Process, which: "previous" | "current", n: number) => {
        const next = await launch(which, n, env);
        rotation.add(next);
        await sleep(STEP_MS);
        rotation.remove(out);
        await sleep(DEREGISTRATION_MS);
        stops.push({ name: out.name, ...(await stopProcess(out)) });
        live = [...live.filter((process) => process !== out), next];
        await sleep(STEP_MS);
        return next;
      };
      await sleep(STEP_MS);
      // Upgrade, one process at a time; then the rollback, the same way.
      await replace(first, "current", 1);
      await replace(second, "current", 2);
      const [newOne, newTwo] = live;
      const rolledBack = await replace(newOne!, "previous", 3);
      await replace(newTwo!, "previous", 4);
      await load.stop();
      const loadSeconds = (Date.now() - began) / 1000;

      const failures = failuresOf(load);
      const expected = expectedEvents(load);
      const { missing, pending } = await allDelivered(receiver, expected, async () => {
        const { rows } = await pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM webhook_deliveries WHERE status <> 'succeeded'",
        );
        return rows[0]!.n;
      });
      const { rows: streams } = await pool.query<{ id: string; status: string }>(
        "SELECT id::text AS id, status FROM streams WHERE brand_id = ANY($1::uuid[])",
        [brandIds],
      );
      const stored = new Map(streams.map((row) => [row.id, row.status]));
      const { rows: deliveries } = await pool.query<{ status: string; n: number; retried: number }>(
        `SELECT status, count(*)::int AS n, count(*) FILTER (WHERE attempt > 1)::int AS retried
           FROM webhook_deliveries GROUP BY status`,
      );
      const twice = [...receiver.delivered.values()].filter((count) => count > 1).length;

      console.log(
        `release to release on PostgreSQL (${release.version}@${release.commit.slice(0, 7)} ⇄ this checkout): ` +
          `${load.answers.length} requests in ${loadSeconds.toFixed(0)} s ${JSON.stringify(tally(load, (answer) => answer.operation))}, ` +
          `by process ${JSON.stringify(tally(load, (answer) => answer.backend))}; failed: ${failures.length}; ` +
          `acknowledged writes: ${load.started.length} starts and ${load.ended.length} ends, checked in the database; ` +
          `events: ${expected.length}, delivered ${expected.length - missing.length} (${twice} more than once, ${receiver.failedFirst()} after a refused first attempt); ` +
          `deliveries ${JSON.stringify(deliveries)}; stops: ${JSON.stringify(stops)}`,
      );

      expect(failures).toEqual([]);
      expect(load.retried).toEqual([]);
      expect(load.started.length).toBeGreaterThan(100);
      expect(stops.map((one) => one.code)).toEqual([0, 0, 0, 0]);
      // Back on a database this checkout migrated, the previous release says what it found and serves.
      if (addedMigrations.length > 0)
        expect(rolledBack.server.stdout()).toContain(
          `The database has migrations of a newer version (${addedMigrations.join(", ")}); they only add, so this version runs on it.`,
        );
      // Every start answered 201 is stored, every end answered 200 is ended, and nothing else was written.
      expect(load.started.filter((write) => !stored.has(write.id))).toEqual([]);
      expect(load.ended.filter((write) => stored.get(write.id) !== "ended")).toEqual([]);
      expect(stored.size).toBe(load.started.length);
      expect(missing).toEqual([]);
      expect(pending).toBe(0);
      // Each process took its share: old and new served side by side.
      const served = tally(load, (answer) => answer.backend);
      for (const process of [first, second, newOne!, newTwo!]) expect(served[process.name] ?? 0).toBeGreaterThan(50);
    } finally {
      for (const process of running.splice(0)) await stop(process.server);
      await pool.end();
      await database.drop();
    }
  });

  it("on the embedded database: the previous release stopped and this checkout started on its DATA_DIR, then back, under load: only refused requests retried, none failed, every acknowledged write kept, every event delivered", {
    timeout: 600_000,
  }, async () => {
    const began = Date.now();
    const dataDir = join(scratch, "data");
    // One address throughout, as a client sees its one server: the port of a first process, kept.
    const previous = await launch("previous", 1, { DATA_DIR: dataDir });
    const port = new URL(previous.base).port;
    const env = { DATA_DIR: dataDir, PORT: port };
    const backend: Backend = { name: "the server", base: previous.base };
    const rotation = new Rotation();
    rotation.add(backend);
    const { keys, brandIds } = await provision(previous.base, receiver.url);
    receiver.reset();
    const load = startRollingLoad({
      rotation,
      keys,
      clients: 8,
      pauseMs: 50,
      timeoutMs: 15_000,
      retryConnectionErrors: true,
    });
    const restarts: {
      from: string;
      to: string;
      code: number | null;
      answeredWhileStopping: number;
      sigterm: number;
      ready: number;
    }[] = [];
    let current = previous;
    /** Stops the running process, starts `which`'s on the same directory and port. */
    const restart = async (which: "previous" | "current", n: number) => {
      const sigterm = Date.now();
      const stopped = await stopProcess(current);
      const next = await launch(which, n, env);
      restarts.push({ from: current.name, to: next.name, ...stopped, sigterm, ready: Date.now() });
      current = next;
      await sleep(STEP_MS);
    };
    await sleep(STEP_MS);
    await restart("current", 1);
    await restart("previous", 2);
    await load.stop();
    const loadSeconds = (Date.now() - began) / 1000;
    const failures = failuresOf(load);
    const expected = expectedEvents(load);
    // The receiver's view while the server runs; the database's (nothing left to deliver) once it is stopped.
    const { missing } = await allDelivered(receiver, expected, async () => 0);
    await sleep(2_000);
    await stopProcess(current);
    running.splice(0);

    // A restart's refusals: requests that failed between its SIGTERM and the new process being
    // ready (one sent just before the signal, whose connection the stopping server never took up,
    // is reset after it). Its downtime: from the first request refused to the first answer to a
    // request sent after that refusal (which only the new process can give).
    const during = (one: (typeof restarts)[number], answer: LoadAnswer) =>
      answer.endedAt >= one.sigterm && answer.endedAt <= one.ready;
    const downtimes = restarts.map((one) => {
      const refused = load.retried.filter((answer) => during(one, answer));
      expect(refused.length, "requests refused while one process replaced the other").toBeGreaterThan(0);
      const first = refused.reduce((a, b) => (b.startedAt < a.startedAt ? b : a));
      const answered = load.answers
        .filter((answer) => answer.status > 0 && answer.startedAt >= first.endedAt)
        .reduce((a, b) => (b.endedAt < a.endedAt ? b : a));
      return { refused: refused.length, ms: answered.endedAt - first.startedAt, startMs: one.ready - one.sigterm };
    });
    const outsideRestarts = load.retried.filter((answer) => !restarts.some((one) => during(one, answer)));

    const db = await openDatabase(undefined, { dataDir });
    try {
      const stored = new Map(
        (
          await db.query<{ id: string; status: string }>(
            "SELECT id::text AS id, status FROM streams WHERE brand_id = ANY($1::uuid[])",
            [brandIds],
          )
        ).map((row) => [row.id, row.status]),
      );
      const deliveries = await db.query<{ status: string; n: number }>(
        "SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status",
      );
      const twice = [...receiver.delivered.values()].filter((count) => count > 1).length;
      console.log(
        `release to release on the embedded database (${release.version}@${release.commit.slice(0, 7)} → this checkout → back): ` +
          `${load.answers.length} requests in ${loadSeconds.toFixed(0)} s ${JSON.stringify(tally(load, (answer) => answer.operation))}; failed: ${failures.length}; ` +
          `refused and retried: ${load.retried.length} (${JSON.stringify(tally({ ...load, answers: load.retried }, (answer) => answer.failure ?? ""))}); ` +
          `downtime per restart (first refused → first answered): ${downtimes.map((one) => `${(one.ms / 1000).toFixed(2)} s`).join(", ")} ` +
          `(SIGTERM → new process ready: ${downtimes.map((one) => `${(one.startMs / 1000).toFixed(2)} s`).join(", ")}); ` +
          `acknowledged writes: ${load.started.length} starts and ${load.ended.length} ends, checked in the database; ` +
          `events: ${expected.length}, delivered ${expected.length - missing.length} (${twice} more than once, ${receiver.failedFirst()} after a refused first attempt); ` +
          `deliveries ${JSON.stringify(deliveries)}; stops: ${JSON.stringify(restarts.map(({ from, code, answeredWhileStopping }) => ({ from, code, answeredWhileStopping })))}`,
      );
      expect(failures).toEqual([]);
      expect(outsideRestarts).toEqual([]);
      expect(restarts.map((one) => one.code)).toEqual([0, 0]);
      expect(load.started.length).toBeGreaterThan(50);
      expect(load.started.filter((write) => !stored.has(write.id))).toEqual([]);
      expect(load.ended.filter((write) => stored.get(write.id) !== "ended")).toEqual([]);
      expect(stored.size).toBe(load.started.length);
      expect(missing).toEqual([]);
      expect(deliveries.filter((row) => row.status !== "succeeded")).toEqual([]);
    } finally {
      await db.close();
    }
  });
});
