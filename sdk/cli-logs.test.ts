// `live-stream-hosting logs tail` as a partner runs it, a process of its own, against the real
// server: a request made meanwhile from elsewhere is printed within 2 s, with its status, method,
// path, request id and error code; `--status 4xx` leaves successes out; the tail's own polls are
// never printed. And its usage errors.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../testkit/harness.ts";
import { EXIT_USAGE, main } from "./cli.ts";

const BIN = fileURLToPath(new URL("./bin.ts", import.meta.url));
const TSX = fileURLToPath(import.meta.resolve("tsx/esm"));

/** The tail, started; resolves once it says it is following. */
async function tail(server: TestServer, key: string, args: string[] = []) {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    ["--import", TSX, BIN, "logs", "tail", ...args],
    {
      env: {
        ...process.env,
        LIVE_STREAM_HOSTING_BASE_URL: `${server.baseUrl}/api/v1`,
        LIVE_STREAM_HOSTING_API_KEY: key,
      },
    },
  );
  const lines: Array<{ at: number; text: string }> = [];
  let err = "";
  let partial = "";
  child.stdout.on("data", (chunk: Buffer) => {
    partial += chunk;
    const complete = partial.split("\n");
    partial = complete.pop()!;
    for (const text of complete) lines.push({ at: performance.now(), text });
  });
  child.stderr.on("data", (chunk: Buffer) => (err += chunk));
  const waitFor = async (match: (text: string) => boolean, timeoutMs: number) => {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const found = lines.find((line) => match(line.text));
      if (found) return found;
      if (performance.now() > deadline || child.exitCode !== null)
        throw new Error(
          `not printed within ${timeoutMs} ms; out:\n${lines.map((l) => l.text).join("\n")}\nerr:\n${err}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  await waitFor((text) => text.startsWith("Following the request log"), 60_000);
  return {
    lines,
    waitFor,
    async stop() {
      child.kill("SIGINT");
      const [code] = await once(child, "exit");
      return code as number;
    },
  };
}

describe("live-stream-hosting logs tail", () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer();
    ({ key } = await server.tenant({ rate_limit_per_minute: 10_000 }));
  });
  afterAll(() => server?.close());

  it("prints a request made from elsewhere within 2 s, and never its own polls", async () => {
    const running = await tail(server, key);
    // Another terminal: the same brand's key, a request the tail did not make.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const sentAt = performance.now();
    const answer = await server.call("GET", `/api/v1/streams/${randomUUID()}`, { key });
    const requestId = answer.headers.get("request-id")!;
    const line = await running.waitFor((text) => text.includes(requestId), 5_000);
    expect(line.at - sentAt).toBeLessThan(2_000);
    expect(line.text).toMatch(
      /^\d{4}-\d{2}-\d{2}T[\d:.]+Z {2}404 {2}GET {4}\/streams\/[0-9a-f-]{36} {2}req_\w+ {2}not_found$/,
    );
    // About three polls later, still only that one line: the tail's own GET /requests are left out.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(running.lines.filter((l) => !l.text.startsWith("Following"))).toHaveLength(1);
    expect(await running.stop()).toBe(130);
  }, 90_000);

  it("--status 4xx prints only refusals", async () => {
    const running = await tail(server, key, ["--status", "4xx"]);
    const ok = await server.call("GET", "/api/v1/streams", { key });
    const refused = await server.call("POST", "/api/v1/streams", { key, body: {} });
    expect(refused.status).toBe(400);
    await running.waitFor((text) => text.includes(refused.headers.get("request-id")!), 5_000);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(running.lines.some((l) => l.text.includes(ok.headers.get("request-id")!))).toBe(false);
    expect(running.lines.at(-1)!.text).toMatch(/ 400 {2}POST {3}\/streams {2}\S+ {2}missing_fields$/);
    await running.stop();
  }, 90_000);
});

describe("logs tail's usage", () => {
  const run = async (args: string[]) => {
    const err: string[] = [];
    const code = await main(args, {
      env: {
        LIVE_STREAM_HOSTING_API_KEY: `svc_live_${"0".repeat(32)}`,
        LIVE_STREAM_HOSTING_BASE_URL: "http://127.0.0.1:9/api/v1",
      },
      out: () => undefined,
      err: (line) => err.push(line),
      fetch: async () => {
        throw new Error("not reached");
      },
    });
    return { code, err: err.join("\n") };
  };

  it.each([
    [["logs"], "logs needs tail"],
    [["logs", "follow"], 'logs needs tail, not "follow"'],
    [["logs", "tail", "--status", "4x"], "--status must be a status code such as 429 or a class such as 4xx"],
    [["logs", "tail", "--method", "FETCH"], "--method must be GET, POST, DELETE, HEAD, PUT or PATCH"],
    [["logs", "tail", "--path", "streams"], "--path must start with /"],
    [["logs", "tail", "--events", "stream.started"], "logs takes no --events"],
  ])("%j exits 2: %s", async (args, message) => {
    const { code, err } = await run(args);
    expect(code).toBe(EXIT_USAGE);
    expect(err).toContain(message);
  });
});
