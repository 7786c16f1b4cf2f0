// Two server processes (server/main.ts, as `npm start` runs it) on one PostgreSQL: the brand's
// rate limit, the concurrency limit, key revocation and webhook delivery hold across them.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../sdk/client.ts";
import { testDatabaseUrl } from "../config.ts";
import { ADMIN_TOKEN, postgresSkipReason, scratchPostgresDatabase, streamBody } from "../../testkit/harness.ts";
import { type RunningProcess, runServer, serverOrigin, stop } from "../../testkit/server-process.ts";

const skipped = postgresSkipReason();
if (skipped) console.log(skipped);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

async function call(
  base: string,
  method: string,
  path: string,
  { key, body }: { key?: string; body?: unknown } = {},
): Promise<Answer> {
  const response = await fetch(base + path, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

/** `node server/main.ts` on a free port, resolved with its origin once it listens. */
async function startProcess(databaseUrl: string): Promise<{ base: string; server: RunningProcess }> {
  const server = runServer({
    DATABASE_URL: databaseUrl,
    ADMIN_TOKEN,
    SWEEP_INTERVAL_MS: "50",
    WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
    WEBHOOK_TIMEOUT_MS: "5000",
    LOG_LEVEL: "warn",
  });
  try {
    return { base: await serverOrigin(server), server };
  } catch (error) {
    await stop(server, "SIGKILL");
    throw error;
  }
}

/** A webhook receiver that answers 204 after a short pause and notes overlapping deliveries of one event. */
async function startReceiver() {
  const received = new Map<string, number>();
  const inFlight = new Map<string, number>();
  let overlaps = 0;
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
      const id = (JSON.parse(raw) as { id: string }).id;
      received.set(id, (received.get(id) ?? 0) + 1);
      inFlight.set(id, (inFlight.get(id) ?? 0) + 1);
      if (inFlight.get(id)! > 1) overlaps += 1;
      setTimeout(() => {
        inFlight.set(id, inFlight.get(id)! - 1);
        res.writeHead(204).end();
      }, 10);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    overlaps: () => overlaps,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Waits, if needed, for the next minute, so that at least `needMs` of the current window are left. */
async function windowWithAtLeast(needMs: number): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await sleep(left + 250);
}

describe.skipIf(skipped !== null)("two server processes on one PostgreSQL", () => {
  const closers: Array<() => Promise<unknown>> = [];
  let bases: string[] = [];
  let outputs: Array<() => string> = [];
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  const admin = (method: string, path: string, body?: unknown) =>
    call(bases[0]!, method, `/admin/v1${path}`, { key: ADMIN_TOKEN, body });

  /** A brand (patched as given) and a test key with every scope, made through the operator API. */
  async function tenant(patch: Record<string, number> = {}): Promise<{ brandId: string; key: string; keyId: string }> {
    const brand = await admin("POST", "/brands", { name: "Two processes", vertical: "live-commerce", plan: "growth" });
    expect(brand.status).toBe(201);
    const brandId = brand.body.brand_id as string;
    if (Object.keys(patch).length > 0)
      expect((await admin("PATCH", `/brands/${brandId}`, patch)).body).toMatchObject(patch);
    const scopes = ["streams:read", "streams:write", "analytics:read", "webhooks:write"];
    const key = await admin("POST", "/keys", {
      brand_id: brandId,
      name: "both processes",
      environment: "test",
      scopes,
    });
    expect(key.status).toBe(201);
    return { brandId, key: key.body.key, keyId: key.body.key_id };
  }

  beforeAll(async () => {
    const scratch = await scratchPostgresDatabase(testDatabaseUrl()!, "lsh_two_processes");
    closers.push(() => scratch.drop());
    receiver = await startReceiver();
    closers.push(() => receiver.close());
    const servers = await Promise.all([startProcess(scratch.url), startProcess(scratch.url)]);
    for (const { server } of servers) closers.push(() => stop(server));
    bases = servers.map(({ base }) => base);
    outputs = servers.map(
      ({ server }) =>
        () =>
          server.stdout() + server.stderr(),
    );
  }, 180_000);

  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  }, 60_000);

  it("share one brand's window: of 150 requests alternating between them, exactly 100 succeed and 50 get 429, RateLimit-Remaining counting down across both", async () => {
    const { key } = await tenant();
    // 150 requests take a few seconds at most; they must all fall in one window.
    await windowWithAtLeast(20_000);
    const answers: Answer[] = [];
    for (let i = 0; i < 150; i++) answers.push(await call(bases[i % 2]!, "GET", "/api/v1/streams", { key }));

    const resets = answers.map((answer) => Number(answer.headers.get("ratelimit-reset")));
    for (let i = 1; i < resets.length; i++)
      expect(resets[i], "the window rolled over mid-test").toBeLessThanOrEqual(resets[i - 1]!);
    const succeeded = answers.filter((answer) => answer.status === 200);
    const limited = answers.filter((answer) => answer.status === 429);
    expect([succeeded.length, limited.length]).toEqual([100, 50]);
    expect(limited.every((answer) => answer.body.error.code === "rate_limited")).toBe(true);
    // Each process answers its share of the successes, with the count shared: 99, 98, … 0.
    expect(new Set(answers.slice(0, 100).map((answer) => answer.status))).toEqual(new Set([200]));
    expect(succeeded.map((answer) => Number(answer.headers.get("ratelimit-remaining")))).toEqual(
      Array.from({ length: 100 }, (_, i) => 99 - i),
    );
    expect(new Set(limited.map((answer) => answer.headers.get("ratelimit-remaining")))).toEqual(new Set(["0"]));
    expect(new Set(answers.map((answer) => answer.headers.get("ratelimit-limit")))).toEqual(new Set(["100"]));
    expect(answers.every((answer) => answer.headers.get("retry-after") === null)).toBe(true);
  }, 90_000);

  it("share the concurrency limit: 30 parallel starts split across them give exactly the brand's 10 × 201 and 20 × 429 concurrency_limit", async () => {
    const { key } = await tenant({ max_active_streams: 10 });
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => call(bases[i % 2]!, "POST", "/api/v1/streams", { key, body: streamBody() })),
    );
    const created = answers.filter((answer) => answer.status === 201);
    const refused = answers.filter((answer) => answer.status === 429);
    expect([created.length, refused.length]).toEqual([10, 20]);
    expect(refused.every((answer) => answer.body.error.code === "concurrency_limit")).toBe(true);
    // Both see the same 10 active streams.
    for (const base of bases)
      expect((await call(base, "GET", "/api/v1/streams?status=live", { key })).body.total).toBe(10);
  }, 60_000);

  it("share Idempotency-Keys: 20 parallel starts with one key split across them create one stream; every other answer is its replay or 409 idempotency_key_in_use; either process replays it afterwards", async () => {
    const { key } = await tenant({ max_active_streams: 10 });
    const idempotencyKey = `order-${Date.now()}`;
    const send = (base: string) =>
      fetch(`${base}/api/v1/streams`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          "idempotency-key": idempotencyKey,
        },
        body: JSON.stringify(streamBody()),
      }).then(async (response) => ({
        status: response.status,
        replayed: response.headers.get("idempotent-replayed"),
        body: (await response.json()) as any,
      }));
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => send(bases[i % 2]!)));
    const created = answers.filter((answer) => answer.status === 201);
    const busy = answers.filter((answer) => answer.status === 409);
    expect(created.length + busy.length).toBe(20);
    expect(busy.every((answer) => answer.body.error.code === "idempotency_key_in_use")).toBe(true);
    expect(new Set(created.map((answer) => answer.body.stream_id)).size).toBe(1);
    expect(created.filter((answer) => answer.replayed === null)).toHaveLength(1);
    const streamId = created[0]!.body.stream_id;
    for (const base of bases) {
      const again = await send(base);
      expect([again.status, again.replayed, again.body.stream_id]).toEqual([201, "true", streamId]);
      const listed = (await call(base, "GET", "/api/v1/streams", { key })).body;
      expect([listed.total, listed.streams[0].id]).toEqual([1, streamId]);
    }
  }, 60_000);

  it("share revocation: a key revoked through one process is refused 401 by the other on its next request", async () => {
    const { key, keyId } = await tenant();
    expect((await call(bases[1]!, "GET", "/api/v1/streams", { key })).status).toBe(200);
    expect((await call(bases[0]!, "DELETE", `/admin/v1/keys/${keyId}`, { key: ADMIN_TOKEN })).body).toEqual({
      key_id: keyId,
      revoked: true,
    });
    const refused = await call(bases[1]!, "GET", "/api/v1/streams", { key });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe("unauthorized");
    expect((await call(bases[0]!, "GET", "/api/v1/streams", { key })).status).toBe(401);
  }, 30_000);

  it("deliver 200 webhook events with both delivery workers running: each exactly once, none attempted twice at once", async () => {
    const { brandId, key } = await tenant({ rate_limit_per_minute: 1_000, max_active_streams: 100 });
    const registered = await call(bases[0]!, "POST", "/api/v1/webhooks", {
      key,
      body: { url: receiver.url, events: ["stream.started", "stream.ended"] },
    });
    expect(registered.status).toBe(201);

    // 100 test streams started and ended, through both processes: 100 stream.started and 100
    // stream.ended events, delivered while more are being recorded.
    const ids: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const started = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          call(bases[i % 2]!, "POST", "/api/v1/streams", { key, body: streamBody() }),
        ),
      );
      expect(started.map((answer) => answer.status)).toEqual(Array(10).fill(201));
      ids.push(...started.map((answer) => answer.body.stream_id as string));
    }
    for (let batch = 0; batch < 10; batch++) {
      const ended = await Promise.all(
        ids
          .slice(batch * 10, batch * 10 + 10)
          .map((id, i) => call(bases[(i + 1) % 2]!, "DELETE", `/api/v1/streams/${id}`, { key })),
      );
      expect(ended.map((answer) => answer.status)).toEqual(Array(10).fill(200));
    }

    const deliveries = async () =>
      (await admin("GET", `/webhook-deliveries?brand_id=${brandId}`)).body.deliveries as Array<{
        event_id: string;
        status: string;
        attempt: number;
      }>;
    const deadline = Date.now() + 60_000;
    let last: Awaited<ReturnType<typeof deliveries>> = [];
    while (Date.now() < deadline) {
      last = await deliveries();
      if (last.length === 200 && last.every((delivery) => delivery.status !== "pending")) break;
      await sleep(200);
    }
    // A moment more, so that a second attempt of any delivery would have arrived.
    await sleep(1_000);
    last = await deliveries();

    expect(last, outputs.map((output) => output()).join("\n")).toHaveLength(200);
    expect(last.filter((delivery) => delivery.status !== "succeeded" || delivery.attempt !== 1)).toEqual([]);
    expect(new Set(last.map((delivery) => delivery.event_id)).size).toBe(200);
    expect(receiver.received.size).toBe(200);
    expect([...receiver.received.values()].filter((count) => count !== 1)).toEqual([]);
    expect(receiver.overlaps()).toBe(0);
  }, 120_000);

  it("serve GET /webhooks/listen from the database: events made through one process reach a listener on the other, which resumes there without a loss", async () => {
    const { key } = await tenant();
    type Seen = { id: string; line: string };
    /** Listens on `base` until stopped, noting each event once: its type and stream. */
    function listenOn(base: string, seen: Seen[], lastEventId?: string) {
      const stop = new AbortController();
      let connected!: () => void;
      const open = new Promise<void>((resolve) => (connected = resolve));
      const client = createClient({ baseUrl: `${base}/api/v1`, apiKey: key });
      const done = (async () => {
        for await (const event of client.webhooks.listen({
          events: ["stream.started", "stream.ended"],
          lastEventId,
          signal: stop.signal,
          onConnect: connected,
        })) {
          const body = JSON.parse(event.body) as { type: string; data: { stream_id: string } };
          if (!seen.some((one) => one.id === event.id))
            seen.push({ id: event.id, line: `${body.type} ${body.data.stream_id}` });
        }
      })();
      return { open, stop: () => (stop.abort(), done) };
    }
    const start = async (base: string) =>
      (await call(base, "POST", "/api/v1/streams", { key, body: streamBody() })).body.stream_id as string;
    const end = async (base: string, id: string) =>
      expect((await call(base, "DELETE", `/api/v1/streams/${id}`, { key })).status).toBe(200);
    const [onA, onB] = [[] as Seen[], [] as Seen[]];

    // Listening on A; the stream is started and ended through B.
    const first = listenOn(bases[0]!, onA);
    await first.open;
    const one = await start(bases[1]!);
    await end(bases[1]!, one);
    await until(() => onA.length === 2, "both events on process A");
    await first.stop();
    expect(onA.map((event) => event.line).sort()).toEqual([`stream.ended ${one}`, `stream.started ${one}`]);

    // An event while nobody listens, through A; the listener resumes on B after the last event it had.
    const two = await start(bases[0]!);
    const last = onA.find((event) => event.line.startsWith("stream.ended"))!.id;
    const second = listenOn(bases[1]!, onB, last);
    await second.open;
    await end(bases[0]!, two);
    await until(() => onB.some((event) => event.line === `stream.ended ${two}`), "the last event on process B");
    await second.stop();
    // Each event once across both listeners (the resumed stream repeats those just before the one named).
    const missed = [`stream.started ${two}`, `stream.ended ${two}`].filter(
      (line) => !onB.some((event) => event.line === line),
    );
    expect(missed).toEqual([]);
    expect(onB.filter((event) => event.id === last)).toEqual([]);
  }, 60_000);
});

async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
