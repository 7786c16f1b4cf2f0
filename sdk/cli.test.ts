// The `live-stream-hosting` command against the real server in-process. The server runs on a
// manual clock, and the command's waits advance it, so `stream.error` takes milliseconds.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../server/testing/harness.ts";
import { API_KEY_ENV, BASE_URL_ENV, EXIT_API_FAILURE, EXIT_OK, EXIT_USAGE, main, USAGE } from "./cli.ts";
import { createClient, type LiveStreamClient } from "./client.ts";

let server: TestServer;
let key: string;
let baseUrl: string;
let api: LiveStreamClient;

beforeAll(async () => {
  server = await startTestServer();
  ({ key } = await server.tenant());
  baseUrl = `${server.baseUrl}/api/v1`;
  api = createClient({ baseUrl, apiKey: key });
});

afterAll(() => server?.close());

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
    },
  });
  return { code, out: out.join("\n"), err: err.join("\n"), sleeps };
}

const streamIdIn = (output: string) => /Started stream ([0-9a-f-]{36})/.exec(output)?.[1];

describe("live-stream-hosting trigger", () => {
  it("stream.started: starts a live test stream and reports stream.started", async () => {
    const { code, out, err } = await run(["trigger", "stream.started", "--base-url", baseUrl, "--api-key", key]);
    expect(err).toBe("");
    expect(code).toBe(EXIT_OK);
    const id = streamIdIn(out)!;
    expect((await api.streams.get(id)).status).toBe("live");
    expect(out).toContain("Events fired: stream.started");
    expect(out).toContain(`end it sooner with DELETE /streams/${id}`);
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

  it("names the registered webhooks that receive the events", async () => {
    const { url } = await api.webhooks.create({ url: "https://hooks.example.com/lsh-cli-test", events: ["stream.ended"] });
    try {
      const started = await run(["trigger", "stream.started", "--base-url", baseUrl, "--api-key", key]);
      expect(started.out).toContain("No active webhook of this brand's test mode subscribes to these events");
      const ended = await run(["trigger", "stream.ended", "--base-url", baseUrl, "--api-key", key]);
      expect(ended.out).toContain(`Sent to 1 webhook(s):\n  ${url} (stream.ended)`);
    } finally {
      const { webhooks } = await api.webhooks.list();
      for (const webhook of webhooks) await api.webhooks.delete(webhook.webhook_id);
    }
  });

  it("exits 1 and prints the code and message when the API refuses", async () => {
    const { code, err } = await run(["trigger", "stream.ended", "--base-url", baseUrl, "--api-key", "svc_test_not_a_real_key"]);
    expect(code).toBe(EXIT_API_FAILURE);
    expect(err).toMatch(/^API error 401 unauthorized: /);
  });

  it("exits 1 when the brand is at its concurrency limit, saying so", async () => {
    const tenant = await server.tenant({ max_active_streams: 0 });
    const { code, err } = await run(["trigger", "stream.started", "--base-url", baseUrl, "--api-key", tenant.key]);
    expect(code).toBe(EXIT_API_FAILURE);
    expect(err).toMatch(/^API error 429 concurrency_limit: /);
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
    ["no API key", ["trigger", "stream.ended"], new RegExp(`no API key: pass --api-key svc_test_… or set ${API_KEY_ENV}`)],
    ["a live key", ["trigger", "stream.ended", "--api-key", "svc_live_abc"], /refusing a live key \(svc_live_…\).*Pass a test key/],
    ["a key that is no test key", ["trigger", "stream.ended", "--api-key", "abc"], /must be a test key/],
    ["a relative base URL", ["trigger", "stream.ended", "--api-key", "svc_test_abc", "--base-url", "/api/v1"], /baseUrl "\/api\/v1" is not an absolute URL/],
  ])("exits 2 on %s, saying what is wrong", async (_name, argv, message) => {
    const { code, err, out } = await run(argv as string[]);
    expect(code).toBe(EXIT_USAGE);
    expect(err).toMatch(message);
    expect(out).toBe("");
  });
});
