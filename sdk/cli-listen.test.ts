// `live-stream-hosting listen` against the real server in-process: it forwards test-mode events
// to a local receiver that verifies them with the printed secret, loses none across a cut
// connection (through a TCP proxy), and is refused a live key.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTcpProxy, type TcpProxy } from "../testkit/tcp-proxy.ts";
import { CREATOR_ID, startTestServer, type TestServer } from "../testkit/harness.ts";
import { EXIT_API_FAILURE, EXIT_OK, main } from "./cli.ts";
import { createClient } from "./client.ts";
import { verifyWebhook } from "./webhooks.ts";
import type { WebhookEvent } from "./webhook-signature.ts";

let server: TestServer;
let proxy: TcpProxy;
let receiver: Server;
let receiverUrl: string;
let secret = "";
/** What the receiver verified, and what it refused. */
const received: WebhookEvent[] = [];
const refused: string[] = [];

beforeAll(async () => {
  server = await startTestServer();
  proxy = await startTcpProxy(Number(new URL(server.baseUrl).port));
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      try {
        received.push(verifyWebhook(Buffer.concat(chunks), req.headers["x-service-signature"] as string, secret));
        res.writeHead(204).end();
      } catch (error) {
        refused.push((error as Error).message);
        res.writeHead(400).end();
      }
    });
  }).listen(0, "127.0.0.1");
  await once(receiver, "listening");
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;
});

afterAll(async () => {
  await proxy?.close();
  await server?.close();
  receiver?.close();
});

async function until(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("live-stream-hosting listen", () => {
  it("forwards each event signed with the printed secret, and resumes after a cut connection without losing one", async () => {
    const { key } = await server.tenant({ max_active_streams: 50 });
    const api = createClient({ baseUrl: `${server.baseUrl}/api/v1`, apiKey: key });
    const out: string[] = [];
    const err: string[] = [];
    const stop = new AbortController();
    const running = main(
      [
        "listen",
        "--forward-to",
        receiverUrl,
        "--events",
        "stream.started,stream.ended",
        "--base-url",
        `http://127.0.0.1:${proxy.port}/api/v1`,
        "--api-key",
        key,
      ],
      {
        env: {},
        out: (line) => {
          out.push(line);
          secret ||= /^Signing secret of this session: (whsec_\S+)$/.exec(line)?.[1] ?? "";
        },
        err: (line) => err.push(line),
        signal: stop.signal,
      },
    );
    await until(() => out.includes("Connected; waiting for events."), "the connection");
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);

    const start = () =>
      api.streams.create({ creator_id: CREATOR_ID, product_name: "listen test", platform: "youtube" });
    const first = await start();
    await until(() => received.length === 1, "the first event");

    // The network drops; events happen meanwhile; the command reconnects and resumes.
    proxy.cutAll();
    const during = [await start(), await start()];
    await api.streams.end(first.stream_id);
    await until(() => out.some((line) => line.startsWith("Reconnected; resuming after")), "the reconnection");
    const after = await start();
    await until(() => received.length === 5, "every event");
    // Events arrive in order: a repeat of an earlier one would come before this last event.
    const last = await start();
    await until(() => received.some((event) => event.data.stream_id === last.stream_id), "the last event");
    stop.abort();
    expect(await running).toBe(EXIT_OK);

    const started = [first, ...during, after, last].map((stream) => stream.stream_id);
    expect(received.map((event) => `${event.type} ${event.data.stream_id}`).sort()).toEqual(
      [...started.map((id) => `stream.started ${id}`), `stream.ended ${first.stream_id}`].sort(),
    );
    // Each once, though the resumed stream repeated the events before the cut.
    expect(new Set(received.map((event) => event.id)).size).toBe(6);
    expect(refused).toEqual([]);
    expect(err.some((line) => line.startsWith("Connection lost"))).toBe(true);
    const line = out.find((one) => one.includes(`stream ${after.stream_id}`))!;
    expect(line).toMatch(
      new RegExp(`^\\S+Z  stream\\.started  evt_[0-9a-f]{32}  stream ${after.stream_id}  → 204 \\(\\d+ ms\\)$`),
    );
  }, 40_000);

  it("refuses a live key: the server answers 403 test_mode_only", async () => {
    const brand = await server.brand();
    const live = await server.key(brand.id, { environment: "live" });
    const answer = await server.call("GET", "/api/v1/webhooks/listen", { key: live.key });
    expect(answer.status).toBe(403);
    expect(answer.body.error.code).toBe("test_mode_only");
    // The command refuses it before calling.
    const err: string[] = [];
    const code = await main(["listen", "--forward-to", receiverUrl, "--api-key", live.key], {
      env: {},
      out: () => undefined,
      err: (one) => err.push(one),
    });
    expect(code).toBe(2);
    expect(err[0]).toMatch(/refusing a live key/);
  });

  it("exits 1 with the server's answer when the key cannot listen", async () => {
    const brand = await server.brand();
    const { key } = await server.key(brand.id, { scopes: ["streams:read"] });
    const err: string[] = [];
    const code = await main(
      ["listen", "--forward-to", receiverUrl, "--base-url", `${server.baseUrl}/api/v1`, "--api-key", key],
      { env: {}, out: () => undefined, err: (one) => err.push(one) },
    );
    expect(code).toBe(EXIT_API_FAILURE);
    expect(err[0]).toMatch(/^API error 403 insufficient_scope: /);
  });

  it("answers 400 for a Last-Event-ID that names no event of the brand", async () => {
    const { key } = await server.tenant();
    const answer = await server.call("GET", "/api/v1/webhooks/listen", {
      key,
      headers: { "last-event-id": `evt_${"0".repeat(32)}` },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe("invalid_fields");
  });
});
