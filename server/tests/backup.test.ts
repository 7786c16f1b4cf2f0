/**
 * Online backup and offline restore of the embedded database, as an operator runs them: the server
 * in a process of its own under a steady load of writes (streams started and ended in both modes,
 * webhooks registered and deleted, deliveries attempted), `npm run admin -- backup <file>` while
 * it serves, then `DATA_DIR=<dir> npm run admin -- restore <file>` and the restored database
 * checked: every write answered before the backup began is in it, and what the database keeps
 * twice agrees (stream counts and list positions, wallets and holds, delivery attempts, the
 * request log's counts). Rates are measured and printed, never asserted.
 */
import { Agent, createServer, request, type Server } from "node:http";
import { once } from "node:events";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_SCOPES } from "../domain/types.ts";
import { openDatabase, type Database } from "../store/database.ts";
import { migrate } from "../store/migrate.ts";
import { ADMIN_TOKEN, availableEngines, startTestServer, streamBody } from "../../testkit/harness.ts";
import { type RunningProcess, runProcess, runServer, serverOrigin, stop } from "../../testkit/server-process.ts";
import { preciseCpuSeconds } from "../../bench/lib/process-cpu.ts";

const scratch = mkdtempSync(join(tmpdir(), "lsh-backup-"));
const started: RunningProcess[] = [];
afterAll(async () => {
  await Promise.all(started.map((running) => stop(running, "SIGKILL")));
  rmSync(scratch, { recursive: true, force: true });
});

const admin = (args: string[], env: Record<string, string> = {}) => {
  const running = runProcess(process.execPath, ["server/cli/admin.ts", ...args], env);
  started.push(running);
  return running;
};

/** The CLI's exit code and what it printed. */
async function finished(running: RunningProcess): Promise<{ code: number | null; out: string; err: string }> {
  const { code } = await running.exited;
  return { code, out: running.stdout(), err: running.stderr() };
}

const RATE = 200;
/**
 * Connections the load holds to the server at most, kept alive, as a load balancer's pool to one
 * server holds them: a write finding them all busy waits in the client's queue, and is still sent
 * on time. Before, at most 64 writes could wait and a tick finding 64 was skipped: the backup's copy
 * holds the database for up to a second, so ticks were skipped and 150–189 writes a second went
 * out. With more allowed to wait but a connection each (fetch), a slow server had hundreds waiting
 * in its accept queue, the backup CLI's connection among them, for a minute and more.
 */
const CONNECTIONS = 64;
/** Writes waiting for their answer at most (ten seconds of them); a tick finding this many is skipped (and counted). */
const MAX_WAITING = 10 * RATE;
/** A live-mode stream is `preparing` until its host joins (SIM_AGENT_JOIN_MS, then a sweep); ended only once older. */
const LIVE_AFTER_MS = 1_500;

/** The load's connections to the server (CONNECTIONS of them at most). */
const pool = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
afterAll(() => pool.destroy());

/** One API request through the pool: its status and body. */
function send(url: string, method: string, key: string, body?: unknown): Promise<{ status: number; text: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method,
      agent: pool,
      headers: {
        authorization: `Bearer ${key}`,
        ...(payload === undefined
          ? {}
          : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
      },
    });
    req.on("error", reject);
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("error", reject);
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.end(payload);
  });
}
const CREDITS = 100_000_000;

interface Tenant {
  brandId: string;
  keys: Record<"test" | "live", string>;
}

interface Acked {
  id: string;
  at: number;
}

describe("backup while 200 writes a second are served, restore, and the restored database checked", () => {
  let receiver: Server;
  let receiverUrl: string;
  let server: RunningProcess;
  let origin: string;
  const dataDir = join(scratch, "data");
  const backupFile = join(scratch, "lsh.tar.gz");
  const restoredDir = join(scratch, "restored");
  const tenants: Tenant[] = [];

  beforeAll(async () => {
    // Two answers in three succeed; the third fails, so deliveries are retried.
    let hits = 0;
    receiver = createServer((req, res) => {
      req.resume();
      res.statusCode = ++hits % 3 === 0 ? 500 : 204;
      res.end();
    });
    receiver.listen(0, "127.0.0.1");
    await once(receiver, "listening");
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    server = runServer({
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
      WEBHOOK_RETRY_SCHEDULE_MS: "200,400,800,1600,3200",
      SIM_AGENT_JOIN_MS: "300",
      SWEEP_INTERVAL_MS: "200",
      LOG_LEVEL: "warn",
    });
    started.push(server);
    origin = await serverOrigin(server);
    const call = async (method: string, path: string, body: unknown) => {
      const response = await fetch(`${origin}/admin/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(response.status, await response.clone().text()).toBeLessThan(300);
      return (await response.json()) as Record<string, string>;
    };
    for (let n = 0; n < 4; n++) {
      const brand = await call("POST", "/brands", {
        name: `Backup ${n}`,
        vertical: "live-commerce",
        plan: "enterprise",
        credits_cents: CREDITS,
        plan_minutes: 1_000_000,
        rate_limit_per_minute: 1_000_000,
        max_active_streams: 10_000,
      });
      const keys = {} as Tenant["keys"];
      for (const environment of ["test", "live"] as const)
        keys[environment] = (
          await call("POST", "/keys", { brand_id: brand.brand_id, name: environment, environment, scopes: ALL_SCOPES })
        ).key!;
      tenants.push({ brandId: brand.brand_id!, keys });
    }
  }, 120_000);

  afterAll(() => new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve())));

  it("holds every write answered before it began, and restores to a database whose counts, totals and positions agree", {
    timeout: 240_000,
  }, async () => {
    const streamsStarted: Acked[] = [];
    const streamsEnded: Acked[] = [];
    const webhooksMade: Acked[] = [];
    const webhooksDeleted: Acked[] = [];
    const open = new Map<string, { key: string; ids: Acked[] }>();
    const hooks = new Map<string, string[]>();
    const hooksOnServer = new Map<string, number>();
    const failures = new Map<string, number>();
    let sent = 0;
    let skipped = 0;
    let inFlight = 0;
    /** Every write: when it was sent, when answered, and its status. */
    const writes: { sentAt: number; at: number; status: number }[] = [];

    const api = async (key: string, method: string, path: string, body?: unknown) => {
      const sentAt = Date.now();
      const response = await send(`${origin}/api/v1${path}`, method, key, body);
      const text = response.text;
      writes.push({ sentAt, at: Date.now(), status: response.status });
      if (response.status >= 300) {
        const label = `${method} ${path.replace(/[0-9a-f-]{36}/, "{id}")} ${response.status}`;
        failures.set(label, (failures.get(label) ?? 0) + 1);
      }
      return { status: response.status, body: text ? JSON.parse(text) : undefined, at: Date.now() };
    };

    /** One write, chosen round robin over brands and modes: start, end, or a webhook change. */
    const write = async (n: number) => {
      const tenant = tenants[n % tenants.length]!;
      const mode = Math.floor(n / tenants.length) % 2 === 0 ? "test" : "live";
      const key = tenant.keys[mode];
      const slot = `${tenant.brandId}/${mode}`;
      const streams = open.get(slot) ?? { key, ids: [] };
      open.set(slot, streams);
      const registered = hooks.get(slot) ?? [];
      hooks.set(slot, registered);
      const choice = n % 10;
      // A brand's webhooks on the server: registered, being registered, or being deleted. On a slow
      // machine many writes are in flight at once; counted only from answers, the mode would pass
      // its 16 webhooks and be refused (429 webhook_limit).
      const onServer = hooksOnServer.get(slot) ?? 0;
      if (choice === 9 && (onServer < 8 || registered.length > 0)) {
        if (onServer < 8) {
          hooksOnServer.set(slot, onServer + 1);
          const made = await api(key, "POST", "/webhooks", {
            url: receiverUrl,
            events: ["stream.started", "stream.ended", "stream.error"],
          });
          if (made.status === 201) {
            registered.push(made.body.webhook_id);
            webhooksMade.push({ id: made.body.webhook_id, at: made.at });
          } else hooksOnServer.set(slot, (hooksOnServer.get(slot) ?? 1) - 1);
        } else {
          const id = registered.shift()!;
          const deleted = await api(key, "DELETE", `/webhooks?id=${id}`);
          if (deleted.status < 300) {
            webhooksDeleted.push({ id, at: deleted.at });
            hooksOnServer.set(slot, (hooksOnServer.get(slot) ?? 1) - 1);
          }
        }
      } else if (choice >= 5 && streams.ids.length > 0 && Date.now() - streams.ids[0]!.at >= LIVE_AFTER_MS) {
        const { id } = streams.ids.shift()!;
        const ended = await api(key, "DELETE", `/streams/${id}`);
        if (ended.status === 200) streamsEnded.push({ id, at: ended.at });
      } else {
        const made = await api(key, "POST", "/streams", streamBody({ duration_minutes: 60 }));
        if (made.status === 201) {
          streams.ids.push({ id: made.body.stream_id, at: made.at });
          streamsStarted.push({ id: made.body.stream_id, at: made.at });
        }
      }
    };

    // 200 writes a second, each sent at its time whatever the answers before it (at most MAX_WAITING
    // waiting: past that a tick is skipped, and counted).
    let stopping = false;
    const t0 = Date.now();
    const cpuBefore = { server: preciseCpuSeconds(server.child.pid!), client: process.cpuUsage() };
    const load = (async () => {
      const pending = new Set<Promise<void>>();
      for (let n = 0; !stopping; n++) {
        const due = t0 + (n * 1000) / RATE;
        const wait = due - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (inFlight >= MAX_WAITING) {
          skipped++;
          continue;
        }
        inFlight++;
        sent++;
        const done: Promise<void> = write(n)
          .catch((error: Error) => {
            failures.set(error.message, (failures.get(error.message) ?? 0) + 1);
          })
          .finally(() => {
            inFlight--;
            pending.delete(done);
          });
        pending.add(done);
      }
      await Promise.all(pending);
    })();

    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const began = Date.now();
    const backup = await finished(admin(["backup", backupFile], { ADMIN_TOKEN, ADMIN_URL: `${origin}/admin/v1` }));
    const ended = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    stopping = true;
    await load;
    const seconds = (Date.now() - t0) / 1000;
    const serverCpu = preciseCpuSeconds(server.child.pid!) - cpuBefore.server;
    const clientCpu = process.cpuUsage(cpuBefore.client);
    expect(backup.code, backup.err).toBe(0);
    expect(backup.out).toMatch(/^Backup written to .* and checked: taken \S+ by server \d+\.\d+\.\d+, \d+ files/);

    // A restore refuses the running server's directory, even with --force, and leaves it be.
    const held = await finished(admin(["restore", backupFile, "--force"], { DATA_DIR: dataDir }));
    expect(held.code).toBe(1);
    expect(held.err).toMatch(
      new RegExp(
        `^admin restore: DATA_DIR ${dataDir} is in use by process ${server.child.pid} on \\S+ .*a restore is made offline`,
      ),
    );
    expect(readdirSync(dataDir).some((name) => name.startsWith(".replaced-") || name.startsWith(".restore-"))).toBe(
      false,
    );
    await stop(server);

    const restored = await finished(admin(["restore", backupFile], { DATA_DIR: restoredDir }));
    expect(restored.code, restored.err).toBe(0);
    expect(restored.out).toContain(`Restored ${backupFile} into ${restoredDir}: taken `);

    const db = await openDatabase(undefined, { dataDir: restoredDir });
    try {
      expect(await migrate(db)).toEqual([]);
      const acked = (list: Acked[]) => list.filter((write) => write.at < began).map((write) => write.id);
      const during = (list: Acked[]) => list.filter((write) => write.at >= began && write.at <= ended).length;
      const ids = async (sql: string) => new Set((await db.query<{ id: string }>(sql)).map((row) => row.id));

      const inBackup = await ids("SELECT id::text AS id FROM streams");
      const endedInBackup = await ids("SELECT id::text AS id FROM streams WHERE status IN ('ended', 'error')");
      const hooksInBackup = await ids("SELECT id::text AS id FROM webhooks");
      const hooksDeletedInBackup = await ids("SELECT id::text AS id FROM webhooks WHERE deleted_at IS NOT NULL");
      expect(acked(streamsStarted).filter((id) => !inBackup.has(id))).toEqual([]);
      expect(acked(streamsEnded).filter((id) => !endedInBackup.has(id))).toEqual([]);
      expect(acked(webhooksMade).filter((id) => !hooksInBackup.has(id))).toEqual([]);
      expect(acked(webhooksDeleted).filter((id) => !hooksDeletedInBackup.has(id))).toEqual([]);
      // Nothing answered after the backup ended is in it.
      const late = streamsStarted.filter((write) => write.at > ended && inBackup.has(write.id));
      expect(late).toEqual([]);

      await expectConsistent(db);
      const [rows] = await db.query<{ streams: number; deliveries: number; attempts: number; events: number }>(
        `SELECT (SELECT count(*)::int FROM streams) AS streams, (SELECT count(*)::int FROM webhook_deliveries) AS deliveries,
                  (SELECT count(*)::int FROM webhook_attempts) AS attempts, (SELECT count(*)::int FROM webhook_events) AS events`,
      );
      const rate = (from: number, to: number) => {
        const sentThen = writes.filter((write) => write.sentAt >= from && write.sentAt < to).length;
        const answered = writes.filter((write) => write.at >= from && write.at < to && write.status < 300).length;
        return `${((sentThen * 1000) / (to - from)).toFixed(0)}/s sent, ${((answered * 1000) / (to - from)).toFixed(0)}/s answered 2xx`;
      };
      const waits = writes.map((write) => write.at - write.sentAt).sort((a, b) => a - b);
      const percentile = (p: number) => waits[Math.min(waits.length - 1, Math.floor(waits.length * p))];
      console.log(
        `backup under load: ${sent} writes sent in ${seconds.toFixed(1)} s (${(sent / seconds).toFixed(0)}/s, ${skipped} ticks skipped with ${MAX_WAITING} waiting); ` +
          `before the backup ${rate(t0, began)}, while it was taken ${rate(began, ended)}; answers p50 ${percentile(0.5)} ms, p99 ${percentile(0.99)} ms; ` +
          `CPU over the load: server ${((serverCpu / seconds) * 100).toFixed(0)} % of a core (${((serverCpu * 1000) / writes.length).toFixed(1)} ms a write, its deliveries and the backup included), ` +
          `this test process (load and receiver) ${(((clientCpu.user + clientCpu.system) / 1e6 / seconds) * 100).toFixed(0)} %, load average ${loadavg()[0]!.toFixed(1)}; ` +
          `answered before the backup began: ${acked(streamsStarted).length} starts, ${acked(streamsEnded).length} ends, ` +
          `${acked(webhooksMade).length + acked(webhooksDeleted).length} webhook changes, all in it; ` +
          `answered while it was taken (${((ended - began) / 1000).toFixed(1)} s with the CLI): ${during(streamsStarted) + during(streamsEnded)}; ` +
          `restored: ${rows!.streams} streams, ${rows!.events} events, ${rows!.deliveries} deliveries, ${rows!.attempts} attempts; ` +
          `refused answers: ${JSON.stringify(Object.fromEntries(failures))}`,
      );
      expect(rows!.attempts).toBeGreaterThan(0);
      // Every write was one the API accepts: none refused, none failed.
      expect(Object.fromEntries(failures)).toEqual({});
    } finally {
      await db.close();
    }

    // The server starts on the restored directory and serves what it holds.
    const again = runServer({ DATA_DIR: restoredDir, ADMIN_TOKEN });
    started.push(again);
    const againOrigin = await serverOrigin(again);
    expect((await fetch(`${againOrigin}/readyz`)).status).toBe(200);
    const id = streamsStarted.find((write) => write.at < began)!.id;
    const tenantKeys = tenants.flatMap((tenant) => [tenant.keys.test, tenant.keys.live]);
    const found = await Promise.all(
      tenantKeys.map((key) =>
        fetch(`${againOrigin}/api/v1/streams/${id}`, { headers: { authorization: `Bearer ${key}` } }),
      ),
    );
    expect(found.filter((response) => response.status === 200)).toHaveLength(1);
    await stop(again);
  });

  it("restore refuses a damaged or truncated file and a directory holding a database, and changes nothing", async () => {
    expect(existsSync(backupFile)).toBe(true);
    const bytes = readFileSync(backupFile);
    const damaged = join(scratch, "damaged.tar.gz");
    const flipped = Buffer.from(bytes);
    flipped[Math.floor(flipped.length / 2)]! ^= 0xff;
    writeFileSync(damaged, flipped);
    const truncated = join(scratch, "truncated.tar.gz");
    writeFileSync(truncated, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
    const notBackup = join(scratch, "notes.tar.gz");
    writeFileSync(notBackup, "not a backup\n");

    for (const [file, reason] of [
      [
        damaged,
        /cannot be restored: (.* does not match its checksum: the file is damaged|it is damaged or not gzip-compressed .*|.*)\. Nothing was changed\./,
      ],
      [truncated, /cannot be restored: the file is incomplete: its compressed data ends early\. Nothing was changed\./],
      [notBackup, /cannot be restored: it is damaged or not gzip-compressed \(.*\)\. Nothing was changed\./],
    ] as const) {
      const target = join(scratch, `never-${readdirSync(scratch).length}`);
      const refused = await finished(admin(["restore", file], { DATA_DIR: target }));
      expect(refused.code).toBe(1);
      expect(refused.err).toMatch(reason);
      expect(existsSync(target)).toBe(false);
    }

    // The restored directory holds a database: refused without --force; with it, moved aside.
    const before = readdirSync(restoredDir).sort();
    const full = await finished(admin(["restore", backupFile], { DATA_DIR: restoredDir }));
    expect(full.code).toBe(1);
    expect(full.err).toMatch(/is not empty \(it has .*\): restore into a new or empty directory, or add --force/);
    expect(readdirSync(restoredDir).sort()).toEqual(before);
    const forced = await finished(admin(["restore", backupFile, "--force"], { DATA_DIR: restoredDir }));
    expect(forced.code, forced.err).toBe(0);
    const [aside] = readdirSync(restoredDir).filter((name) => name.startsWith(".replaced-"));
    expect(forced.out).toContain(`What ${restoredDir} held before is in ${join(restoredDir, aside!)}`);
    expect(readdirSync(join(restoredDir, aside!)).sort()).toEqual(before);
  }, 120_000);
});

/** What the database keeps twice must agree. */
async function expectConsistent(db: Database): Promise<void> {
  // Per brand and mode: the counts by status and the list positions the triggers keep.
  expect(
    await db.query(
      `SELECT c.brand_id, c.mode FROM stream_counts c
       LEFT JOIN (SELECT brand_id, mode, count(*) FILTER (WHERE status = 'preparing') AS preparing,
                         count(*) FILTER (WHERE status = 'live') AS live, count(*) FILTER (WHERE status = 'ended') AS ended,
                         count(*) FILTER (WHERE status = 'error') AS error
                  FROM streams GROUP BY brand_id, mode) s USING (brand_id, mode)
       WHERE (c.preparing, c.live, c.ended, c.error) IS DISTINCT FROM
             (coalesce(s.preparing, 0), coalesce(s.live, 0), coalesce(s.ended, 0), coalesce(s.error, 0))`,
    ),
  ).toEqual([]);
  expect(
    await db.query(
      `SELECT brand_id, mode FROM streams s LEFT JOIN stream_counts c USING (brand_id, mode) WHERE c.brand_id IS NULL`,
    ),
  ).toEqual([]);
  expect(
    await db.query(
      `SELECT s.id FROM streams s LEFT JOIN stream_positions p ON p.stream_id = s.id
       WHERE p.stream_id IS NULL OR p.brand_id <> s.brand_id OR p.mode <> s.mode`,
    ),
  ).toEqual([]);
  expect(
    await db.query(
      `SELECT brand_id, mode FROM stream_positions GROUP BY brand_id, mode
       HAVING min(position) <> 0 OR max(position) <> count(*) - 1 OR count(DISTINCT position) <> count(*)`,
    ),
  ).toEqual([]);
  expect(
    await db.query(
      `SELECT a.stream_id FROM stream_positions a JOIN stream_positions b
         ON a.brand_id = b.brand_id AND a.mode = b.mode AND a.position < b.position AND a.created_at > b.created_at`,
    ),
  ).toEqual([]);
  // Wallets: the held credits are the holds of the live-mode streams not yet settled; the balance,
  // the credits granted less every charge; the minutes used, every billed minute.
  expect(
    await db.query(
      `SELECT b.id FROM brands b
       LEFT JOIN (SELECT brand_id, sum(hold_cents) FILTER (WHERE status IN ('preparing', 'live')) AS held,
                         sum(coalesce(charged_cents, 0)) AS charged, sum(coalesce(billed_minutes, 0)) AS minutes
                  FROM streams WHERE mode = 'live' GROUP BY brand_id) s ON s.brand_id = b.id
       WHERE b.name LIKE 'Backup %'
         AND (b.credits_held_cents <> coalesce(s.held, 0) OR b.credits_cents <> $1 - coalesce(s.charged, 0)
              OR b.minutes_used <> coalesce(s.minutes, 0))`,
      [CREDITS],
    ),
  ).toEqual([]);
  // Deliveries: each one's attempt count is the attempts recorded in its current series, and an
  // attempt belongs to a delivery of an event of the same brand.
  expect(
    await db.query(
      `SELECT d.id FROM webhook_deliveries d
       LEFT JOIN (SELECT delivery_id, series, count(*) AS n, max(attempt) AS last FROM webhook_attempts GROUP BY delivery_id, series) a
         ON a.delivery_id = d.id AND a.series = d.series
       WHERE d.attempt <> coalesce(a.n, 0) OR d.attempt <> coalesce(a.last, 0)`,
    ),
  ).toEqual([]);
  expect(
    await db.query(
      `SELECT d.id FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id
       WHERE e.brand_id <> w.brand_id OR e.mode <> w.mode`,
    ),
  ).toEqual([]);
  // The request log's counts per brand and mode, kept by the statements that write it.
  expect(
    await db.query(
      `SELECT c.brand_id, c.mode FROM request_log_counts c
       LEFT JOIN (SELECT brand_id, mode, count(*) AS n FROM request_log GROUP BY brand_id, mode) r USING (brand_id, mode)
       WHERE c.stored <> coalesce(r.n, 0)`,
    ),
  ).toEqual([]);
}

/** Every table of the public schema: its row count and a digest of its rows, in a stable order. */
async function tableDigests(db: Database): Promise<Record<string, string>> {
  const tables = await db.query<{ name: string }>(
    "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
  );
  const digests: Record<string, string> = {};
  for (const { name } of tables) {
    const [row] = await db.query<{ n: number; digest: string | null }>(
      `SELECT count(*)::int AS n, md5(string_agg(t::text, '|' ORDER BY t::text)) AS digest FROM "${name}" t`,
    );
    digests[name] = `${row!.n} ${row!.digest ?? "-"}`;
  }
  return digests;
}

describe("a backup of a server with nothing left to do", () => {
  it("restores every table as the server left it", { timeout: 120_000 }, async () => {
    let hits = 0;
    const receiver = createServer((req, res) => {
      req.resume();
      hits++;
      res.statusCode = 204;
      res.end();
    });
    receiver.listen(0, "127.0.0.1");
    await once(receiver, "listening");
    const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    const dataDir = join(scratch, "quiet");
    const file = join(scratch, "quiet.tar.gz");
    const restoredDir = join(scratch, "quiet-restored");
    const quiet = runServer({
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
      SWEEP_INTERVAL_MS: "200",
    });
    started.push(quiet);
    try {
      const origin = await serverOrigin(quiet);
      // The demo key is printed with the start-up banner, which may come after the address line.
      const [, key] = await quiet.waitFor(/\n {2}(svc_test_\w+)\n/);
      const call = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${origin}/api/v1${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
        expect(response.status, path).toBeLessThan(300);
        return response.json();
      };
      await call("POST", "/webhooks", { url, events: ["stream.started", "stream.ended"] });
      // Eight streams, six of them ended (the demo brand may have three active at once): 14 events.
      for (let n = 0; n < 8; n++) {
        const { stream_id } = (await call("POST", "/streams", streamBody())) as { stream_id: string };
        if (n < 6) await call("DELETE", `/streams/${stream_id}`);
      }
      // Every delivery made (one webhook), then the request log written (every 0.5 s).
      const deadline = Date.now() + 60_000;
      while (hits < 14 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(hits).toBe(14);
      await new Promise((resolve) => setTimeout(resolve, 1_500));

      const backup = await finished(admin(["backup", file], { ADMIN_TOKEN, ADMIN_URL: `${origin}/admin/v1` }));
      expect(backup.code, backup.err).toBe(0);
      await stop(quiet);
      const restored = await finished(admin(["restore", file], { DATA_DIR: restoredDir }));
      expect(restored.code, restored.err).toBe(0);

      const source = await openDatabase(undefined, { dataDir });
      const copy = await openDatabase(undefined, { dataDir: restoredDir });
      try {
        const [before, after] = [await tableDigests(source), await tableDigests(copy)];
        expect(Object.keys(before).length).toBeGreaterThan(20);
        expect(after).toEqual(before);
        expect(before.streams).toMatch(/^8 /);
        expect(before.webhook_attempts).toMatch(/^14 /);
      } finally {
        await source.close();
        await copy.close();
      }
    } finally {
      receiver.close();
    }
  });
});

describe.each(availableEngines())("POST /admin/v1/backup where there is no data directory (%s)", (engine) => {
  it("answers 409 backup_unavailable, saying what to use instead", async () => {
    const server = await startTestServer({ engine });
    try {
      const answer = await server.call("POST", "/admin/v1/backup", { key: ADMIN_TOKEN });
      expect(answer.status).toBe(409);
      expect(answer.body.error.code).toBe("backup_unavailable");
      expect(answer.body.error.message).toMatch(
        engine === "postgres" ? /runs on PostgreSQL: back the database up with pg_dump/ : /in memory/,
      );
    } finally {
      await server.close();
    }
  });
});
