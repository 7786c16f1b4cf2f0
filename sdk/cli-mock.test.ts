// `live-stream-hosting` as a partner runs it (a process of its own), pointed at the static mock:
// listen, trigger, end, logs tail and grade each stop with exit code 2 and say plainly that the URL
// is the static mock and what it cannot do, instead of forwarding its examples. Pointed at the
// dynamic mock, the server on data of its own, they work (grade still wants a receiver). And
// `trigger stream.error` against a sandbox server (`npm start`, its own process, on its default
// timings) succeeds.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningMock, startMock } from "../mock/prism.ts";
import { type Sandbox, startSandbox } from "../scripts/partner-sandbox.ts";
import { EXIT_OK, EXIT_USAGE } from "./cli.ts";

const BIN = fileURLToPath(new URL("./bin.ts", import.meta.url));
const TSX = fileURLToPath(import.meta.resolve("tsx/esm"));
const TEST_KEY = `svc_test_${"0".repeat(32)}`;

async function cli(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ["--import", TSX, BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk));
  const [code] = await once(child, "exit");
  return { code: code as number, out, err };
}

describe("the CLI pointed at the static mock", () => {
  let mock: RunningMock;
  beforeAll(async () => {
    mock = await startMock();
  }, 60_000);
  afterAll(async () => {
    await mock?.stop();
  });
  const env = () => ({ LIVE_STREAM_HOSTING_BASE_URL: mock.apiBase, LIVE_STREAM_HOSTING_API_KEY: TEST_KEY });

  it.each([
    [["listen", "--forward-to", "http://localhost:3000/hooks"], "listen has no events to receive there"],
    [["trigger", "stream.started"], "trigger cannot make an event happen or deliver it there"],
    [["trigger", "stream.error"], "trigger cannot make an event happen or deliver it there"],
    [["end", "7c0e8f4a-3b1d-4e6f-9a2c-5d8b1e7f3a90"], "end has no streams to end there"],
    [["logs", "tail"], "logs tail has no request log to follow there"],
  ])(
    "%j exits 2 and says it is the static mock",
    async (args, what) => {
      const { code, out, err } = await cli(args, env());
      expect(code).toBe(EXIT_USAGE);
      expect(err.trim()).toBe(
        `live-stream-hosting: ${mock.apiBase} is the static mock (npm run mock; it answers with X-Mock: static). ` +
          `It answers the documented examples and keeps no state, so ${what}. ` +
          "Run this against the dynamic mock (npm run mock -- --dynamic) or the server (npm start) with a test key (svc_test_…).",
      );
      // Nothing of the mock's answers is reported as if it were real.
      expect(out).not.toMatch(/delivered|Started stream|NOT_ACCEPTABLE|stoplight/);
    },
    30_000,
  );

  it("grade --url at the mock exits 2: the URL must be the receiver", async () => {
    const { code, err } = await cli(["grade", "--url", `${mock.apiBase}/streams`, "--secret", "whsec_abc"]);
    expect(code).toBe(EXIT_USAGE);
    expect(err).toContain("--url must be your webhook receiver, not the mock");
  }, 30_000);
});

describe("the CLI pointed at the dynamic mock", () => {
  let mock: RunningMock;
  beforeAll(async () => {
    mock = await startMock({ dynamic: true });
  }, 60_000);
  afterAll(async () => {
    await mock?.stop();
  });
  const env = () => ({ LIVE_STREAM_HOSTING_BASE_URL: mock.apiBase, LIVE_STREAM_HOSTING_API_KEY: TEST_KEY });

  it("triggers an event, reads and moves the test clock, and ends a stream, as against the server", async () => {
    const triggered = await cli(["trigger", "stream.started"], env());
    expect({ code: triggered.code, err: triggered.err }).toEqual({ code: EXIT_OK, err: "" });
    expect(triggered.out).toMatch(/Started stream [0-9a-f-]{36} with .*: live/);
    expect(triggered.out).toContain("Events fired: stream.started, stream.ended");

    const clock = await cli(["clock", "advance", "2h"], env());
    expect({ code: clock.code, err: clock.err }).toEqual({ code: EXIT_OK, err: "" });
    expect(clock.out).toMatch(/2h/);

    const created = await fetch(`${mock.apiBase}/streams`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ creator_id: "avt_Qfmm3FkkaQM0", product_name: "CLI drop", platform: "youtube" }),
    });
    const { stream_id: id } = (await created.json()) as { stream_id: string };
    const ended = await cli(["end", id], env());
    expect({ code: ended.code, err: ended.err, out: ended.out.trim() }).toEqual({
      code: EXIT_OK,
      err: "",
      out: `Ended stream ${id}: ended`,
    });
  }, 60_000);

  it("grade --url at the dynamic mock exits 2 too: the URL must be the receiver", async () => {
    const { code, err } = await cli(["grade", "--url", `${mock.apiBase}/streams`, "--secret", "whsec_abc"]);
    expect(code).toBe(EXIT_USAGE);
    expect(err).toContain("--url must be your webhook receiver, not the mock");
  }, 30_000);
});

describe("trigger stream.error against a sandbox server", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox();
  }, 60_000);
  afterAll(async () => {
    await sandbox?.stop();
  });

  it("waits for the sim:fails-live stream to fail and exits 0", async () => {
    const { code, out, err } = await cli(["trigger", "stream.error"], {
      LIVE_STREAM_HOSTING_BASE_URL: sandbox.apiBase,
      LIVE_STREAM_HOSTING_API_KEY: sandbox.demoKey,
    });
    expect({ code, err }).toEqual({ code: EXIT_OK, err: "" });
    expect(out).toContain("It failed: error");
    expect(out).toContain("Events fired: stream.started, stream.error");
  }, 60_000);
});
