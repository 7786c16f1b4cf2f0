// `live-stream-hosting` as a partner runs it (a process of its own), pointed at the mock: listen,
// trigger, end, logs tail and grade each stop with exit code 2 and say plainly that the URL is the
// mock and what it cannot do, instead of forwarding the mock's answers. And `trigger stream.error` against
// a sandbox server (`npm start`, its own process, on its default timings) succeeds.
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

describe("the CLI pointed at the mock", () => {
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
    "%j exits 2 and says it is the mock",
    async (args, what) => {
      const { code, out, err } = await cli(args, env());
      expect(code).toBe(EXIT_USAGE);
      expect(err.trim()).toBe(
        `live-stream-hosting: ${mock.apiBase} is the mock (npm run mock; it answers with an X-Mock header). ` +
          `The mock keeps no state and sends no events, so ${what}. ` +
          "Run this against the server (npm start) with a test key (svc_test_…).",
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
