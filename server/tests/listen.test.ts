// GET /webhooks/listen where an event stream meets the server's limits: it outlives the request
// time-out, a client that stops reading is cut off once 1 MiB waits for it (and resumes without
// a loss), a database that fails mid-stream ends it, and a stopping server ends every stream
// instead of waiting for it. On PostgreSQL too when TEST_DATABASE_URL is set.
import { once } from "node:events";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createObservability } from "../observability/observability.ts";
import type { StopEvent } from "../runtime.ts";
import { failingDatabase } from "../../testkit/failing-database.ts";
import { DEFAULT_LISTEN_TIMINGS } from "../http/routes/listen.ts";
import {
  freshDatabase,
  postgresSkipReason,
  startTestServer,
  streamBody,
  type TestServer,
} from "../../testkit/harness.ts";
import { capturedLogs } from "../../testkit/log-capture.ts";

const skipped = postgresSkipReason();
if (skipped) console.log(skipped);

const LISTEN = "/api/v1/webhooks/listen";
/** A complete message of the stream: its id. */
const MESSAGE = /^id: (evt_[0-9a-f]{32})\nevent: [a-z.]+\ndata: .*\n\n/gm;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** An open event stream read as it comes: its text so far, and whether it ended (and how). */
async function openStream(server: TestServer, key: string, headers: Record<string, string> = {}) {
  const response = await fetch(server.baseUrl + LISTEN, { headers: { authorization: `Bearer ${key}`, ...headers } });
  expect(response.status).toBe(200);
  const state = { text: "", ended: false, failed: null as Error | null };
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const reading = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        state.text += decoder.decode(value, { stream: true });
      }
    } catch (error) {
      state.failed = error as Error;
    }
    state.ended = true;
  })();
  cleanups.push(async () => {
    await reader.cancel().catch(() => undefined);
    await reading;
  });
  await until(() => state.text.includes(": connected\n\n"), "the stream to open");
  return {
    state,
    ids: () => [...state.text.matchAll(MESSAGE)].map((match) => match[1]!),
    reading,
    close: () => reader.cancel(),
  };
}

async function started(options: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const server = await startTestServer(options);
  cleanups.push(() => server.close());
  return server;
}

describe("GET /webhooks/listen and the server's limits", () => {
  it("takes an empty Last-Event-ID (the contract's default, what Postman sends) as none: from now", async () => {
    const server = await started();
    const { key } = await server.tenant();
    const stream = await openStream(server, key, { "last-event-id": "" });
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    await until(() => stream.ids().length === 1, "the event");
    expect(stream.state.text).toContain(`"stream_id":"${created.body.stream_id}"`);
  });

  it("outlives the request, header and keep-alive time-outs: events still arrive on the same connection", async () => {
    const server = await started({
      config: { httpRequestTimeoutMs: 1_000, httpHeadersTimeoutMs: 500, httpKeepAliveTimeoutMs: 500 },
    });
    const { key } = await server.tenant();
    const stream = await openStream(server, key);
    // Past every time-out, and past the time-out checks Node runs at most once a second.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    expect(created.status).toBe(201);
    await until(() => stream.ids().length === 1 || stream.state.ended, "the event");
    expect(stream.state.ended).toBe(false);
    expect(stream.state.text).toContain(`"stream_id":"${created.body.stream_id}"`);
  }, 30_000);

  it("cuts off a client that stops reading once 1 MiB waits for it; resumed with Last-Event-ID, it misses nothing", async () => {
    const logs = capturedLogs("warn");
    const server = await started({ observability: createObservability({ logger: logs.logger }) });
    const { key, brandId } = await server.tenant();

    // A client that reads the head, then nothing.
    const socket = connect(Number(new URL(server.baseUrl).port), "127.0.0.1");
    cleanups.push(async () => socket.destroy());
    await once(socket, "connect");
    let received = "";
    socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
    const closed = once(socket, "close");

    socket.write(`GET ${LISTEN} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n\r\n`);
    await until(() => received.includes(": connected\n\n"), "the stream to open");
    socket.pause();

    // 3,000 events of about 3 KB: more than the limit and the sockets' buffers (some MB on
    // loopback) hold together.
    const count = 3_000;
    const at = server.clock().toISOString();
    await server.db.query(
      `INSERT INTO webhook_events (id, brand_id, mode, type, stream_id, payload, created_at)
       SELECT 'evt_' || md5(n::text), $1::uuid, 'test', 'stream.started', gen_random_uuid(),
              '{"id":"evt_' || md5(n::text) || '","padding":"' || repeat('x', 3000) || '"}', $2::timestamptz
       FROM generate_series(1, ${count}) AS n`,
      [brandId, at],
    );
    await until(() => logs.raw.some((line) => line.includes("client cut off")), "the cut-off", 30_000);
    const [cutOff] = logs.take().filter((entry) => entry.msg.includes("client cut off"));
    expect(cutOff!.unread_bytes).toBeGreaterThan(1024 * 1024);
    // Its memory: the limit and one write, not the 4 MB of events.
    expect(cutOff!.unread_bytes).toBeLessThan(1024 * 1024 + 4_096);

    // What it had not read is still delivered to it, then the end.
    socket.resume();
    await closed;
    const before = [...received.replace(/\r\n[0-9a-f]+\r\n/g, "").matchAll(MESSAGE)].map((match) => match[1]!);
    expect(before.length).toBeGreaterThan(0);
    expect(before.length).toBeLessThan(count);

    const resumed = await openStream(server, key, { "last-event-id": before.at(-1)! });
    await until(() => new Set([...before, ...resumed.ids()]).size === count, "every event", 30_000);
  }, 60_000);

  it("ends the stream when the database fails mid-stream (logged); the client resumes after the database is back", async () => {
    const fresh = await freshDatabase("pglite");
    cleanups.push(() => fresh.drop());
    const failing = failingDatabase(fresh.db);
    const logs = capturedLogs("warn");
    const server = await started({ database: failing.db, observability: createObservability({ logger: logs.logger }) });
    const { key } = await server.tenant();
    const stream = await openStream(server, key);

    failing.failOn(/\bwebhook_events\b/);
    await until(() => stream.state.ended, "the end of the stream");
    expect(stream.state.failed).toBeNull();
    expect(logs.take().map((entry) => entry.msg)).toContain("listen: stream ended, the events could not be read");
    // While it fails, a new stream is refused before it begins, in the envelope.
    const refused = await server.call("GET", LISTEN, { key });
    expect([refused.status, refused.body.error.code]).toEqual([500, "db_error"]);

    failing.failOn(null);
    const again = await openStream(server, key);
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    await until(() => again.ids().length === 1, "the event");
    expect(again.state.text).toContain(`"stream_id":"${created.body.stream_id}"`);
  }, 30_000);

  it("is ended when the server stops, not waited for: the stop counts it answered and cuts nothing", async () => {
    // A stream held past the stop's deadline would be cut at this request time-out.
    const server = await startTestServer({ config: { httpRequestTimeoutMs: 120_000 } });
    let stopped = false;
    cleanups.push(async () => stopped || server.close());
    const { key } = await server.tenant();
    const streams = [await openStream(server, key), await openStream(server, key)];

    const events: StopEvent[] = [];
    await server.close((event) => events.push(event));
    stopped = true;
    expect(events.find((event) => event.part === "requests")).toEqual({ part: "requests", answered: 2, cut: 0 });
    await Promise.all(streams.map((stream) => stream.reading));
    // Each ended as an answer ends (its last chunk), not as a connection reset.
    for (const stream of streams) expect([stream.state.ended, stream.state.failed]).toEqual([true, null]);
  }, 30_000);

  it("holds at most 10 streams of one brand open; the 11th is 429 listen_limit until one closes", async () => {
    const server = await started();
    const { key } = await server.tenant();
    const other = await server.tenant();
    const streams = [];
    for (let i = 0; i < DEFAULT_LISTEN_TIMINGS.maxOpenPerBrand; i++) streams.push(await openStream(server, key));

    const refused = await server.call("GET", LISTEN, { key });
    expect([refused.status, refused.body.error.code]).toEqual([429, "listen_limit"]);
    expect(refused.body.error.message).toContain("10 event streams");
    // Another brand is not held back by this one's streams.
    await openStream(server, other.key);

    // Closed by its client, a stream no longer counts: a new one opens (once the server has seen the close).
    await streams[0]!.close();
    let status = 0;
    for (let tries = 0; status !== 200 && tries < 40; tries++) {
      const attempt = new AbortController();
      const response = await fetch(server.baseUrl + LISTEN, {
        headers: { authorization: `Bearer ${key}` },
        signal: attempt.signal,
      });
      status = response.status;
      attempt.abort();
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(200);
  }, 30_000);

  it("gives a stream's place back when its client leaves while the first read waits", async () => {
    const fresh = await freshDatabase("pglite");
    cleanups.push(() => fresh.drop());
    const slow = failingDatabase(fresh.db);
    const server = await started({ database: slow.db });
    const { key } = await server.tenant();

    slow.holdOn(/\bwebhook_events\b/);
    for (let i = 0; i < DEFAULT_LISTEN_TIMINGS.maxOpenPerBrand; i++) {
      const leaving = new AbortController();
      const request = fetch(server.baseUrl + LISTEN, {
        headers: { authorization: `Bearer ${key}` },
        signal: leaving.signal,
      }).catch(() => undefined);
      // Long enough for the request to reach the first read, which waits.
      await new Promise((resolve) => setTimeout(resolve, 100));
      leaving.abort();
      await request;
    }
    slow.holdOn(null);

    // None of the ten who left holds a place: ten streams open again.
    for (let i = 0; i < DEFAULT_LISTEN_TIMINGS.maxOpenPerBrand; i++) await openStream(server, key);
  }, 30_000);
});
