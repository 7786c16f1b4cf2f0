import { afterEach, describe, expect, it } from "vitest";
import type { DeliveryOutcome, DeliveryRequest, WebhookTransport } from "../providers/webhook-transport.ts";
import type { Database } from "../store/database.ts";
import { ADMIN_TOKEN, startTestServer, streamBody, type TestServer } from "../../testkit/harness.ts";
import { startDeliveryWorker } from "./delivery-worker.ts";

/**
 * A transport whose receivers answer only when the test releases them, by URL path; or, with
 * `answerAtOnce`, receivers that answer 204 straight away.
 */
function heldTransport({ answerAtOnce = (_path: string): boolean => false } = {}) {
  const waiting: { path: string; release(outcome: DeliveryOutcome): void }[] = [];
  const sent: string[] = [];
  let closed = false;
  /** The most attempts held at once, by path. */
  const mostHeld = new Map<string, number>();
  const transport: WebhookTransport = {
    send(request: DeliveryRequest) {
      const path = new URL(request.url).pathname;
      sent.push(path);
      if (closed || answerAtOnce(path)) return Promise.resolve({ ok: true, status: 204 });
      return new Promise((resolve) => {
        waiting.push({ path, release: resolve });
        const held = waiting.filter((candidate) => candidate.path === path).length;
        mostHeld.set(path, Math.max(held, mostHeld.get(path) ?? 0));
      });
    },
  };
  const release = (path: string) => {
    for (const held of waiting.filter((candidate) => candidate.path === path)) {
      waiting.splice(waiting.indexOf(held), 1);
      held.release({ ok: true, status: 200 });
    }
  };
  const releaseAll = () => [...new Set(waiting.map((held) => held.path))].forEach(release);
  return {
    transport,
    sent,
    mostHeld,
    inFlight: () => waiting.length,
    release,
    releaseAll,
    // After close(), every receiver answers at once, so a test that failed cannot hang stop().
    close() {
      closed = true;
      releaseAll();
    },
  };
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

let server: TestServer;
let stopWorker: (() => Promise<void>) | undefined;
let receivers: ReturnType<typeof heldTransport> | undefined;
/** What the worker reported through onError; every test expects nothing. */
const reported: unknown[] = [];
afterEach(async () => {
  // A failed test may leave attempts held, or due; stop() would wait for them for ever.
  receivers?.close();
  await stopWorker?.();
  stopWorker = undefined;
  expect(reported.splice(0)).toEqual([]);
  await server.close();
});

/** A brand with one webhook per path and a started test stream, so each path has stream.started due. */
async function deliveriesDueTo(
  paths: string[],
  events = ["stream.started"],
): Promise<{ brandId: string; key: string; streamId: string }> {
  server = await startTestServer({ config: { webhookAllowHosts: ["localhost"] } });
  const { brandId, key } = await server.tenant();
  for (const path of paths) {
    const hook = await server.call("POST", "/api/v1/webhooks", {
      key,
      body: { url: `https://localhost${path}`, events },
    });
    expect(hook.status).toBe(201);
  }
  const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
  expect(created.status).toBe(201);
  return { brandId, key, streamId: created.body.stream_id };
}

/** `count` brands, each with one webhook (`/brand-<i>`) and a started test stream: one delivery due to each. */
async function brandsWithOneDeliveryDue(count: number): Promise<void> {
  server = await startTestServer({ config: { webhookAllowHosts: ["localhost"] } });
  for (let i = 0; i < count; i++) {
    const { key } = await server.tenant();
    const body = { url: `https://localhost/brand-${i}`, events: ["stream.started"] };
    expect((await server.call("POST", "/api/v1/webhooks", { key, body })).status).toBe(201);
    expect((await server.call("POST", "/api/v1/streams", { key, body: streamBody() })).status).toBe(201);
  }
}

async function statusesOf(brandId: string): Promise<string[]> {
  const listed = await server.call("GET", `/admin/v1/webhook-deliveries?brand_id=${brandId}`, { key: ADMIN_TOKEN });
  return listed.body.deliveries.map((delivery: { status: string }) => delivery.status).sort();
}

/**
 * The test server's database, counting every statement and, apart, every statement that is not a
 * plain SELECT and every transaction (the writes).
 */
function countingWrites(db: Database): Database & { writes(): number; statements(): number } {
  let writes = 0;
  let statements = 0;
  return {
    engine: db.engine,
    query(sql, params) {
      statements += 1;
      if (!/^\s*SELECT\b/i.test(sql)) writes += 1;
      return db.query(sql, params);
    },
    transaction(work) {
      writes += 1;
      return db.transaction(work);
    },
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
    poolStats: () => db.poolStats(),
    ...(db.requestTimeBudgetMs === undefined ? {} : { requestTimeBudgetMs: db.requestTimeBudgetMs }),
    writes: () => writes,
    statements: () => statements,
  };
}

/**
 * `db`, with each answer to a statement outside a transaction (the worker's looks and claims)
 * shown to `seen` before the worker gets it; `seen` may hold the answer back by returning a promise.
 */
function answersSeen(
  db: Database,
  seen: (sql: string, rows: Array<Record<string, unknown>>) => void | Promise<void>,
): Database {
  return {
    engine: db.engine,
    query: (async (sql: string, params?: unknown[]) => {
      const rows = await db.query(sql, params);
      await seen(sql, rows as Array<Record<string, unknown>>);
      return rows;
    }) as Database["query"],
    transaction: (work) => db.transaction(work),
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
    poolStats: () => db.poolStats(),
  };
}

/** Statements the running worker has sent to the database (start() counts them). */
let workerStatements = () => 0;

/**
 * Waits until the worker has sent `count` more statements: at least that many looks for work (one
 * per tick), each a chance to start what it must not. How a test shows that something does not happen.
 */
async function afterWorkerLooks(count: number): Promise<void> {
  const target = workerStatements() + count;
  await until(() => workerStatements() >= target, `the worker looks for work ${count} more times`);
}

/**
 * The worker on the test server. A long `intervalMs` means no timer tick during the test: only
 * the first fill and the refills as attempts finish can send anything.
 */
function start(
  held: ReturnType<typeof heldTransport>,
  {
    concurrency,
    perWebhook,
    // The per-brand share is off unless a test sets it: most tests here have one brand.
    perBrand = concurrency,
    reserve,
    intervalMs = 10,
    db = server.db,
    apiBusy,
  }: {
    concurrency: number;
    perWebhook?: number;
    perBrand?: number;
    reserve?: number;
    intervalMs?: number;
    db?: Database;
    apiBusy?: () => boolean;
  },
) {
  receivers = held;
  const counted = countingWrites(db);
  workerStatements = counted.statements;
  const worker = startDeliveryWorker(
    { db: counted, clock: server.clock, transport: held.transport, timeoutMs: 10_000, retryScheduleMs: [60_000] },
    {
      concurrency,
      ...(perWebhook ? { perWebhook } : {}),
      perBrand,
      ...(reserve ? { reserve } : {}),
      ...(apiBusy ? { apiBusy } : {}),
      intervalMs,
      onError: (error) => reported.push(error),
    },
  );
  stopWorker = () => worker.stop();
  return worker;
}

describe("delivery worker", () => {
  it("says where it stands: cycling, idle once nothing is due, stopped after stop()", async () => {
    server = await startTestServer();
    const worker = start(heldTransport(), { concurrency: 5, intervalMs: 60_000 });
    expect(worker.state).toBe("cycling");
    await until(() => worker.state === "idle", "the first cycle found nothing due");
    await worker.stop();
    expect(worker.state).toBe("stopped");
  });

  it("sends a delivery that falls due while a slow receiver still holds an earlier attempt", async () => {
    const { brandId, key, streamId } = await deliveriesDueTo(["/slow", "/fast"], ["stream.started", "stream.ended"]);
    const receivers = heldTransport();
    start(receivers, { concurrency: 20 });

    await until(() => receivers.inFlight() === 2, "both stream.started deliveries are in flight");
    receivers.release("/fast");
    await until(async () => (await statusesOf(brandId)).includes("succeeded"), "the fast delivery is recorded");

    // stream.ended falls due while /slow still holds its stream.started attempt.
    expect((await server.call("DELETE", `/api/v1/streams/${streamId}`, { key })).status).toBe(200);
    await until(() => receivers.sent.filter((path) => path === "/fast").length === 2, "stream.ended is sent to /fast");
    // /slow's stream.started attempt is still held; its stream.ended went out beside it.
    await until(() => receivers.sent.length === 4, "stream.ended is sent to /slow too");
    expect([...receivers.sent].sort()).toEqual(["/fast", "/fast", "/slow", "/slow"]);
    expect(receivers.inFlight()).toBe(3);

    receivers.releaseAll();
    await until(
      async () => (await statusesOf(brandId)).every((status) => status === "succeeded"),
      "every delivery is recorded",
    );
    expect(await statusesOf(brandId)).toHaveLength(4);
  });

  it("keeps at most `concurrency` attempts in flight and refills a slot as soon as one frees", async () => {
    const paths = ["/a", "/b", "/c", "/d", "/e"];
    const { brandId } = await deliveriesDueTo(paths);
    const receivers = heldTransport();
    const worker = start(receivers, { concurrency: 2, intervalMs: 60_000 });

    await until(() => receivers.inFlight() === 2, "two attempts are in flight");
    // No tick comes (60 s): once the cycle that filled the slots is over, only a freed slot can send more.
    await until(() => worker.state === "idle", "the filling cycle is over");
    expect(receivers.sent).toHaveLength(2);

    receivers.release(receivers.sent[0]!);
    await until(() => receivers.sent.length === 3, "a third attempt starts in the freed slot");
    expect(receivers.inFlight()).toBe(2);

    while ((await statusesOf(brandId)).some((status) => status !== "succeeded")) {
      receivers.releaseAll();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect([...receivers.sent].sort()).toEqual(paths);
  });

  it("works through a backlog larger than its slots without waiting for the timer", async () => {
    const paths = ["/1", "/2", "/3", "/4", "/5", "/6", "/7"];
    const { brandId } = await deliveriesDueTo(paths);
    const answering = heldTransport({ answerAtOnce: () => true });
    start(answering, { concurrency: 2, intervalMs: 60_000 });

    await until(
      async () => (await statusesOf(brandId)).every((status) => status === "succeeded"),
      "all seven are delivered",
    );
    expect([...answering.sent].sort()).toEqual(paths);
  });

  it("gives one webhook at most `perWebhook` slots, so a hanging receiver does not hold up another", async () => {
    const { brandId, key, streamId } = await deliveriesDueTo(["/hang", "/fast"], ["stream.started", "stream.ended"]);
    // Eight events, so eight deliveries due to each webhook.
    expect((await server.call("DELETE", `/api/v1/streams/${streamId}`, { key })).status).toBe(200);
    for (let i = 0; i < 3; i += 1) {
      const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
      expect((await server.call("DELETE", `/api/v1/streams/${created.body.stream_id}`, { key })).status).toBe(200);
    }
    const receivers = heldTransport({ answerAtOnce: (path) => path === "/fast" });
    start(receivers, { concurrency: 20, perWebhook: 3, intervalMs: 60_000 });

    const sentTo = (path: string) => receivers.sent.filter((sent) => sent === path).length;
    await until(
      async () => (await statusesOf(brandId)).filter((status) => status === "succeeded").length === 8,
      "/fast has all eight",
    );
    expect(sentTo("/fast")).toBe(8);
    expect(sentTo("/hang")).toBe(3);
    expect(receivers.inFlight()).toBe(3);

    // As each held attempt is answered, the next delivery of /hang takes its place, without a timer tick.
    while ((await statusesOf(brandId)).some((status) => status !== "succeeded")) {
      receivers.release("/hang");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(sentTo("/hang")).toBe(8);
    expect(receivers.mostHeld.get("/hang")).toBe(3);
  });

  it("gives one brand at most `perBrand` slots, and a brand with nothing in flight one from the reserve when the rest are held", async () => {
    // Brand A: three webhooks whose receivers hang, two deliveries due to each.
    const { key } = await deliveriesDueTo(["/a-1", "/a-2", "/a-3"], ["stream.started", "stream.ended"]);
    const first = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    expect(first.status).toBe(201);
    const receivers = heldTransport({ answerAtOnce: (path) => path === "/c" });
    start(receivers, { concurrency: 6, perBrand: 3, reserve: 1, intervalMs: 20 });
    await until(() => receivers.inFlight() === 3, "brand A holds its share");
    await afterWorkerLooks(5);
    expect(receivers.inFlight()).toBe(3);

    // Brand B's receivers hang too: it takes its share, the rest of the slots.
    const b = await server.tenant();
    for (const path of ["/b-1", "/b-2", "/b-3"]) {
      const body = { url: `https://localhost${path}`, events: ["stream.started"] };
      expect((await server.call("POST", "/api/v1/webhooks", { key: b.key, body })).status).toBe(201);
    }
    expect((await server.call("POST", "/api/v1/streams", { key: b.key, body: streamBody() })).status).toBe(201);
    await until(() => receivers.inFlight() === 6, "brand B holds its share: every slot is held");

    // Brand C starts a stream while every slot is held: its delivery goes out from the reserve.
    const c = await server.tenant();
    const body = { url: "https://localhost/c", events: ["stream.started"] };
    expect((await server.call("POST", "/api/v1/webhooks", { key: c.key, body })).status).toBe(201);
    expect((await server.call("POST", "/api/v1/streams", { key: c.key, body: streamBody() })).status).toBe(201);
    await until(() => receivers.sent.includes("/c"), "brand C's delivery is sent beside A's and B's held attempts");
    expect(receivers.inFlight()).toBe(6);
    expect(receivers.sent.filter((path) => path.startsWith("/a"))).toHaveLength(3);
  }, 60_000);

  it("starts at most `concurrency + reserve` attempts, however many brands have one delivery due", async () => {
    await brandsWithOneDeliveryDue(12);
    const receivers = heldTransport();
    start(receivers, { concurrency: 4, perBrand: 1, reserve: 2, intervalMs: 10 });
    await until(() => receivers.inFlight() === 6, "the slots and the reserve are taken");
    await afterWorkerLooks(10);
    expect(receivers.inFlight()).toBe(6);
    // Each attempt that ends frees one place, taken by the next brand.
    receivers.release(receivers.sent[0]!);
    await until(() => receivers.sent.length === 7, "a freed place is refilled");
    await afterWorkerLooks(5);
    expect(receivers.inFlight()).toBe(6);
  });

  it("refills a place freed while a cycle that began with every place taken looks for work", async () => {
    await brandsWithOneDeliveryDue(3);
    const receivers = heldTransport();
    // Armed, the next look for work answers only once an attempt held meanwhile has finished: the
    // cycle that looks computed its places while every one was taken.
    let releaseDuringLook: string | null = null;
    const db = answersSeen(server.db, async (sql) => {
      const path = releaseDuringLook;
      if (path !== null && sql.includes("AS next_due_at")) {
        releaseDuringLook = null;
        receivers.release(path);
        // The attempt's bookkeeping (microtasks) is over before the look answers.
        await new Promise((resolve) => setImmediate(resolve));
      }
    });
    start(receivers, { concurrency: 1, perBrand: 1, reserve: 1, intervalMs: 10, db });
    await until(() => receivers.inFlight() === 2, "the slot and the reserve are taken");
    releaseDuringLook = receivers.sent[0]!;
    await until(() => releaseDuringLook === null, "an attempt finishes while the worker looks");
    await until(() => receivers.sent.length === 3, "the freed place is refilled");
    await afterWorkerLooks(5);
    expect(receivers.inFlight()).toBe(2);
  });

  it("sends another brand's retry once due while a hanging brand's backlog at its share is older", async () => {
    // Brand A: a receiver that hangs, with more deliveries due than its share: the oldest due backlog.
    const { key } = await deliveriesDueTo(["/a"], ["stream.started", "stream.ended"]);
    for (let i = 0; i < 2; i++)
      expect((await server.call("POST", "/api/v1/streams", { key, body: streamBody() })).status).toBe(201);
    const b = await server.tenant();
    const body = { url: "https://localhost/b", events: ["stream.started"] };
    expect((await server.call("POST", "/api/v1/webhooks", { key: b.key, body })).status).toBe(201);
    const held = heldTransport();
    let bCalls = 0;
    const transport: WebhookTransport = {
      send: (request) => {
        if (new URL(request.url).pathname !== "/b") return held.transport.send(request);
        held.sent.push("/b");
        // B's receiver fails its first attempt, then answers.
        return Promise.resolve(
          ++bCalls === 1 ? { ok: false, status: 500, error: "HTTP 500" } : { ok: true, status: 204 },
        );
      },
    };
    start({ ...held, transport }, { concurrency: 10, perWebhook: 2, perBrand: 2, intervalMs: 10 });
    await until(() => held.inFlight() === 2, "brand A holds its share; its other deliveries wait");
    expect((await server.call("POST", "/api/v1/streams", { key: b.key, body: streamBody() })).status).toBe(201);
    await until(async () => (await statusesOf(b.brandId))[0] === "pending" && bCalls === 1, "B's first attempt failed");
    await until(async () => {
      const listed = await server.call("GET", `/admin/v1/webhook-deliveries?brand_id=${b.brandId}`, {
        key: ADMIN_TOKEN,
      });
      return listed.body.deliveries[0]?.attempt === 1;
    }, "B's failed attempt is recorded; its retry is due in a minute");
    // Let the worker settle on "nothing to claim" with A's backlog due, then B's retry falls due.
    await afterWorkerLooks(5);
    server.clock.advance(60_000);
    await until(
      async () => (await statusesOf(b.brandId))[0] === "succeeded",
      "B's retry is sent while A's attempts hang",
    );
    expect(held.inFlight()).toBe(2);
  });

  it("writes nothing while idle, however often it looks, with a retry waiting; sends the retry once it is due", async () => {
    const { brandId } = await deliveriesDueTo(["/later"]);
    const answering = heldTransport({ answerAtOnce: () => true });
    let calls = 0;
    const failingOnce: WebhookTransport = {
      send: (request) =>
        ++calls === 1
          ? Promise.resolve({ ok: false, status: 500, error: "HTTP 500" })
          : answering.transport.send(request),
    };
    const db = countingWrites(server.db);
    start({ ...answering, transport: failingOnce }, { concurrency: 20, intervalMs: 10, db });
    const attempts = async () =>
      (await server.call("GET", `/admin/v1/webhook-deliveries?brand_id=${brandId}`, { key: ADMIN_TOKEN })).body
        .deliveries[0]?.attempt;
    await until(
      async () => (await attempts()) === 1,
      "the first attempt failed and is recorded; the retry is due in a minute",
    );

    // Once the attempt's bookkeeping is over, dozens of ticks (every 10 ms) write nothing.
    await until(async () => {
      const before = db.writes();
      await afterWorkerLooks(10);
      return db.writes() === before;
    }, "the worker stops writing");
    const settled = db.writes();
    await afterWorkerLooks(40);
    expect(db.writes()).toBe(settled);
    expect(calls).toBe(1);

    server.clock.advance(60_000);
    await until(async () => (await statusesOf(brandId))[0] === "succeeded", "the retry is sent once due");
    expect(calls).toBe(2);
  });

  it("while API requests are in flight, claims at most 10 deliveries at a time, 50 ms apart at least; the rest at once when they are over", async () => {
    const paths = Array.from({ length: 25 }, (_, i) => `/busy-${i}`);
    // A brand has at most 16 webhooks in a mode: the other 9 belong to a second brand.
    await deliveriesDueTo(paths.slice(0, 16));
    const other = await server.tenant();
    for (const path of paths.slice(16)) {
      const body = { url: `https://localhost${path}`, events: ["stream.started"] };
      expect((await server.call("POST", "/api/v1/webhooks", { key: other.key, body })).status).toBe(201);
    }
    expect((await server.call("POST", "/api/v1/streams", { key: other.key, body: streamBody() })).status).toBe(201);
    const claims: Array<{ at: number; rows: number }> = [];
    const db = answersSeen(server.db, (sql, rows) => {
      if (sql.includes("FOR UPDATE SKIP LOCKED") && sql.includes("UPDATE webhook_deliveries"))
        // One row of the claim's answer carries how many were picked, not a delivery.
        claims.push({ at: performance.now(), rows: rows.filter((row) => row.picked === null).length });
    });
    let apiBusy = true;
    const receivers = heldTransport();
    start(receivers, { concurrency: 50, intervalMs: 10, db, apiBusy: () => apiBusy });

    await until(() => receivers.inFlight() >= 20, "two claims under load");
    apiBusy = false;
    const underLoad = claims.filter((claim) => claim.rows > 0);
    expect(underLoad.slice(0, 2).map((claim) => claim.rows)).toEqual([10, 10]);
    expect(underLoad.every((claim) => claim.rows <= 10)).toBe(true);
    for (let i = 1; i < underLoad.length; i++)
      expect(underLoad[i]!.at - underLoad[i - 1]!.at).toBeGreaterThanOrEqual(45);

    const left = 25 - underLoad.reduce((sum, claim) => sum + claim.rows, 0);
    await until(() => receivers.sent.length === 25, "the rest is sent");
    if (left > 0)
      expect(
        claims
          .filter((claim) => claim.rows > 0)
          .slice(underLoad.length)
          .map((claim) => claim.rows),
      ).toEqual([left]);
  });

  it("stop() waits for the attempts in flight, so each one is recorded", async () => {
    const { brandId } = await deliveriesDueTo(["/held"]);
    const receivers = heldTransport();
    const worker = start(receivers, { concurrency: 20 });
    await until(() => receivers.inFlight() === 1, "the attempt is in flight");

    let stopped = false;
    const stopping = worker.stop().then(() => {
      stopped = true;
    });
    // Everything stop() could finish without the attempt has run: the event loop's queues are empty.
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    receivers.release("/held");
    await stopping;
    expect(await statusesOf(brandId)).toEqual(["succeeded"]);
  });
});
