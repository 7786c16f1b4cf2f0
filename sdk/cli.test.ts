// The `live-stream-hosting` command against the real server in-process. The server runs on a
// manual clock, and the command's waits advance it, so `stream.error` takes milliseconds.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import { generateWebhookSecret } from "../server/domain/webhook-secret.ts";
import { insertWebhook } from "../server/store/webhooks.ts";
import { httpsTransport } from "../server/providers/webhook-transport.ts";
import { CREATOR_ID, startTestServer, type TestServer } from "../testkit/harness.ts";
import { API_KEY_ENV, BASE_URL_ENV, EXIT_API_FAILURE, EXIT_OK, EXIT_USAGE, main, USAGE } from "./cli.ts";
import { createClient, type LiveStreamClient } from "./client.ts";

let server: TestServer;
let key: string;
let baseUrl: string;
let api: LiveStreamClient;
/** A webhook receiver: 204 on /ok, 500 on anything else. */
let receiver: Server;
let receiverUrl: string;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(req.url === "/ok" ? 204 : 500).end());
  }).listen(0, "127.0.0.1");
  await new Promise((resolve) => receiver.once("listening", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  server = await startTestServer({
    delivery: { transport: httpsTransport({ timeoutMs: 2_000, allowHosts: ["127.0.0.1"] }) },
    config: { webhookAllowHosts: ["127.0.0.1"] },
  });
  ({ key } = await server.tenant());
  baseUrl = `${server.baseUrl}/api/v1`;
  api = createClient({ baseUrl, apiKey: key });
});

afterAll(async () => {
  await server?.close();
  receiver?.close();
});

async function run(argv: string[], env: Record<string, string | undefined> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const sleeps: number[] = [];
  const code = await main(argv, {
    env,
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    sleep: async (ms) => {
      sleeps.push(ms);
      server.clock.advance(ms);
      // What the server's background jobs would do meanwhile.
      await server.sweep();
      await server.deliver();
    },
  });
  return { code, out: out.join("\n"), err: err.join("\n"), sleeps };
}

const streamIdIn = (output: string) => /Started stream ([0-9a-f-]{36})/.exec(output)?.[1];

describe("live-stream-hosting trigger", () => {
  it("stream.started: starts a test stream, reports stream.started, and leaves no stream active", async () => {
    const { code, out, err } = await run(["trigger", "stream.started", "--base-url", baseUrl, "--api-key", key]);
    expect(err).toBe("");
    expect(code).toBe(EXIT_OK);
    const id = streamIdIn(out)!;
    expect((await api.streams.get(id)).status).toBe("ended");
    expect(out).toContain("Events fired: stream.started, stream.ended");
  });

  it("ten stream.started in a row all succeed at the spec's limit of 3 active streams", async () => {
    const tenant = await server.tenant();
    for (let i = 0; i < 10; i++) {
      const { code, err } = await run(["trigger", "stream.started", "--base-url", baseUrl, "--api-key", tenant.key]);
      expect(err, `trigger ${i + 1}`).toBe("");
      expect(code).toBe(EXIT_OK);
    }
    const client = createClient({ baseUrl, apiKey: tenant.key });
    expect((await client.streams.list({ status: "live" })).total).toBe(0);
  });

  it("stream.ended: starts a test stream, ends it, and reports both events", async () => {
    const { code, out } = await run(["trigger", "stream.ended"], { [API_KEY_ENV]: key, [BASE_URL_ENV]: baseUrl });
    expect(code).toBe(EXIT_OK);
    const stream = await api.streams.get(streamIdIn(out)!);
    expect(stream.status).toBe("ended");
    expect(out).toContain("Ended it: ended");
    expect(out).toContain("Events fired: stream.started, stream.ended");
  });

  it("stream.error: starts a sim:fails-live stream and waits until it is in error", async () => {
    const { code, out, sleeps } = await run(["trigger", "stream.error", "--base-url", baseUrl, "--api-key", key]);
    expect(code).toBe(EXIT_OK);
    const stream = await api.streams.get(streamIdIn(out)!);
    expect(stream.status).toBe("error");
    expect(stream.product_name).toContain("sim:fails-live");
    expect(out).toContain("Events fired: stream.started, stream.error");
    // The server fails it SIM_AGENT_JOIN_MS (3 s) after it went live: six polls of 500 ms.
    expect(sleeps.reduce((sum, ms) => sum + ms, 0)).toBe(3_000);
  });

  it("says when no webhook is subscribed, and points to listen", async () => {
    const tenant = await server.tenant();
    const { out } = await run(["trigger", "stream.ended", "--base-url", baseUrl, "--api-key", tenant.key]);
    expect(out).toContain(
      "No webhook subscribed to these events — run `live-stream-hosting listen --forward-to <url>`",
    );
  });

  it("reports each delivery's outcome: one received, one refused", async () => {
    const tenant = await server.tenant();
    const client = createClient({ baseUrl, apiKey: tenant.key });
    const good = await client.webhooks.create({ url: `${receiverUrl}/ok`, events: ["stream.started"] });
    const bad = await client.webhooks.create({ url: `${receiverUrl}/refuse`, events: ["stream.ended"] });
    const { code, out } = await run(["trigger", "stream.ended", "--base-url", baseUrl, "--api-key", tenant.key]);
    expect(code).toBe(EXIT_OK);
    expect(out).toContain(`Deliveries (2):\n  stream.started → ${good.url}: delivered (HTTP 204)`);
    expect(out).toMatch(
      new RegExp(`stream\\.ended → ${bad.url.replace(/[.?]/g, "\\$&")}: refused \\(HTTP 500\\); attempt 2 at `),
    );
  });

  it("an OSC 8 link in a webhook URL is refused (invalid_url); one stored before is printed escaped", async () => {
    const tenant = await server.tenant();
    const hidden = "\x1b]8;;https://evil.example/\x1b\\click-here\x1b]8;;\x1b\\\x07";
    const refused = await server.call("POST", "/api/v1/webhooks", {
      key: tenant.key,
      body: { url: `${receiverUrl}/ok${hidden}`, events: ["stream.started"] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("invalid_url");
    // A URL registered before the rule, as the database may still hold one.
    await insertWebhook(server.db, {
      id: randomUUID(),
      brandId: tenant.brandId,
      mode: "test",
      url: `${receiverUrl}/ok${hidden}`,
      events: ["stream.started"],
      secret: generateWebhookSecret(),
      createdAt: server.clock(),
    });
    const { out, err } = await run(["trigger", "stream.started", "--base-url", baseUrl, "--api-key", tenant.key]);
    expect(err).toBe("");
    expect(out).toContain(`${receiverUrl}/ok\\x1b]8;;https://evil.example/\\x1b\\click-here\\x1b]8;;\\x1b\\\\x07`);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
    expect(out).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
  });

  it("exits 1 and prints the code and message when the API refuses", async () => {
    const { code, err } = await run([
      "trigger",
      "stream.ended",
      "--base-url",
      baseUrl,
      "--api-key",
      "svc_test_not_a_real_key",
    ]);
    expect(code).toBe(EXIT_API_FAILURE);
    expect(err).toMatch(/^API error 401 unauthorized: /);
  });

  it("at the concurrency limit, names the active streams and the command that ends them", async () => {
    const tenant = await server.tenant({ max_active_streams: 1 });
    const client = createClient({ baseUrl, apiKey: tenant.key });
    const active = await client.streams.create({
      creator_id: CREATOR_ID,
      product_name: "left live",
      platform: "youtube",
    });
    const { code, err } = await run(["trigger", "stream.started", "--base-url", baseUrl, "--api-key", tenant.key]);
    expect(code).toBe(EXIT_API_FAILURE);
    expect(err).toMatch(/^API error 429 concurrency_limit: /);
    // The server's own message names it, and the command to run follows.
    expect(err).toContain(`in test mode (${active.stream_id}); end one with DELETE /streams/{id}`);
    expect(err).toContain(`End them with: live-stream-hosting end ${active.stream_id}`);
    const ended = await run(["end", active.stream_id, "--base-url", baseUrl, "--api-key", tenant.key]);
    expect(ended.out).toBe(`Ended stream ${active.stream_id}: ended`);
    expect((await run(["trigger", "stream.started", "--base-url", baseUrl, "--api-key", tenant.key])).code).toBe(
      EXIT_OK,
    );
  });
});

describe("live-stream-hosting usage", () => {
  it.each(["--help", "-h", "help", "trigger stream.error --help"])("%s prints the usage and exits 0", async (line) => {
    const { code, out } = await run(line.split(" "));
    expect(code).toBe(EXIT_OK);
    expect(out).toBe(USAGE);
  });

  it.each([
    ["no command", [], /no command given/],
    ["an unknown command", ["start"], /unknown command "start"/],
    ["no event", ["trigger"], /no event given; trigger one of stream\.started, stream\.ended, stream\.error/],
    ["an unknown event", ["trigger", "stream.paused"], /unknown event "stream\.paused"/],
    ["an unknown option", ["trigger", "stream.ended", "--verbose"], /Unknown option '--verbose'/],
    ["an extra argument", ["trigger", "stream.ended", "now"], /unexpected argument "now"/],
    [
      "no API key",
      ["trigger", "stream.ended"],
      new RegExp(`no API key: pass --api-key svc_test_… or set ${API_KEY_ENV}`),
    ],
    [
      "a live key",
      ["trigger", "stream.ended", "--api-key", "svc_live_abc"],
      /refusing a live key \(svc_live_…\).*Pass a test key/,
    ],
    ["a key that is no test key", ["trigger", "stream.ended", "--api-key", "abc"], /must be a test key/],
    [
      "a relative base URL",
      ["trigger", "stream.ended", "--api-key", "svc_test_abc", "--base-url", "/api/v1"],
      /baseUrl "\/api\/v1" is not an absolute URL/,
    ],
  ])("exits 2 on %s, saying what is wrong", async (_name, argv, message) => {
    const { code, err, out } = await run(argv as string[]);
    expect(code).toBe(EXIT_USAGE);
    expect(err).toMatch(message);
    expect(out).toBe("");
  });
});
