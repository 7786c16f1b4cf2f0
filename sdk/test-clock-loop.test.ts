// The test clock from outside: the SDK installed from its packed tarball in an empty project, a
// server in its own process on the real clock (the embedded database, and PostgreSQL when the leg
// has one), the spec's time-out and retry schedule unchanged. A receiver in the project verifies
// every delivery with the SDK's verifyWebhook (the signature's t is real time, so it passes after
// the clock moved hours ahead) or, on /failing, answers 500. The partner moves the clock with
// `live-stream-hosting clock advance`: a stream marked sim:never-joins is in error 5 minutes
// later, a 30-minute stream ends after 31, a failing receiver gets all six attempts after 9 hours.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../mock/prism.ts";
import { availableEngines } from "../testkit/harness.ts";
import { type EngineServer, startServerOn, until } from "../testkit/engine-server.ts";
import { type ConsumerProject, runCommand, sdkConsumerProject } from "../scripts/partner-sandbox.ts";

const ADMIN_TOKEN = "test-clock-loop-admin-token-0123456789abcdef";

/** The partner's receiver: 500 on /failing; elsewhere verifies and prints each event. */
const RECEIVER = `
import { createServer } from "node:http";
import { verifyWebhook } from "@live-stream-hosting/sdk";
const secret = process.env.WEBHOOK_SECRET;
createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    if (req.url === "/failing") {
      console.log(JSON.stringify({ failing: JSON.parse(body).id }));
      res.writeHead(500).end("receiver down");
      return;
    }
    try {
      const event = verifyWebhook(body, req.headers["x-service-signature"], secret);
      console.log(JSON.stringify({ verified: event.id, type: event.type, stream: event.data.stream_id, at: event.created_at }));
      res.writeHead(200).end("ok");
    } catch (error) {
      console.log(JSON.stringify({ refused: String(error) }));
      res.writeHead(400).end("bad signature");
    }
  });
}).listen(Number(process.env.PORT), "127.0.0.1", () => console.log("listening"));
`;

/** The partner's calls through the SDK: `node partner.mjs <step> [argument]`, one JSON line out. */
const PARTNER = `
import { createClient } from "@live-stream-hosting/sdk";
const client = createClient({ baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL, apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY });
const [step, argument] = process.argv.slice(2);
const stream = (productName, duration) =>
  client.streams.create({ creator_id: "avt_Qfmm3FkkaQM0", product_name: productName, platform: "youtube", ...(duration ? { duration_minutes: duration } : {}) });
let result;
if (step === "webhook") result = await client.webhooks.create({ url: argument, events: ["stream.error", "stream.ended"] });
else if (step === "failing-webhook") result = await client.webhooks.create({ url: argument, events: ["stream.started"] });
else if (step === "never-joins") result = await stream("Quiet launch sim:never-joins");
else if (step === "thirty-minutes") result = await stream("Half-hour drop", 30);
else if (step === "stream") result = await stream("Retry drill");
else if (step === "get") result = await client.streams.get(argument);
else if (step === "clock") result = await client.testClock.get();
else if (step === "delivery") result = (await client.webhooks.deliveries({ webhook_id: argument })).deliveries[0] ?? null;
else if (step === "attempts") result = await client.webhooks.retrieveDelivery(argument);
console.log(JSON.stringify(result));
`;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let project: ConsumerProject;
beforeAll(async () => {
  project = await sdkConsumerProject("lsh-test-clock-loop-");
  writeFileSync(join(project.dir, "receiver.mjs"), RECEIVER);
  writeFileSync(join(project.dir, "partner.mjs"), PARTNER);
}, 180_000);
afterAll(() => project?.remove());

describe.each(availableEngines())("the test clock from the installed SDK and its CLI, on %s", (engine) => {
  let server: EngineServer;
  let receiver: ChildProcess | undefined;
  beforeAll(async () => {
    // The spec's time-out (5 minutes) and retry schedule (1m, 5m, 30m, 2h, 6h): the server's defaults.
    server = await startServerOn(engine, {
      ADMIN_TOKEN,
      WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
      SWEEP_INTERVAL_MS: "100",
    });
  }, 180_000);
  afterAll(async () => {
    if (receiver && receiver.exitCode === null) {
      const exited = once(receiver, "exit");
      receiver.kill();
      await exited;
    }
    await server?.stop();
  });

  it("times out a stream that never joins, ends a 30-minute stream and makes a failing receiver's six attempts", async () => {
    const env = {
      LIVE_STREAM_HOSTING_BASE_URL: server.apiBase,
      LIVE_STREAM_HOSTING_API_KEY: await server.newTestKey(),
    };
    const partner = async (step: string, argument?: string) => {
      const ran = await runCommand(process.execPath, ["partner.mjs", step, ...(argument ? [argument] : [])], {
        cwd: project.dir,
        env,
      });
      expect(ran.code, ran.output).toBe(0);
      return JSON.parse(ran.stdout.trim().split("\n").at(-1)!);
    };
    const cli = async (...args: string[]) => {
      const ran = await runCommand(join(project.dir, "node_modules", ".bin", "live-stream-hosting"), args, {
        cwd: project.dir,
        env,
      });
      expect(ran.code, ran.output).toBe(0);
      return ran.stdout;
    };

    const port = await freePort();
    const hook = await partner("webhook", `http://127.0.0.1:${port}/hooks`);
    receiver = spawn(process.execPath, ["receiver.mjs"], {
      cwd: project.dir,
      env: { ...process.env, PORT: String(port), WEBHOOK_SECRET: hook.secret },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let received = "";
    receiver.stdout!.on("data", (chunk: Buffer) => (received += chunk));
    receiver.stderr!.on("data", (chunk: Buffer) => (received += chunk));
    await until(() => (received.includes("listening") ? true : undefined), "the receiver to listen");
    const verified = () =>
      received
        .split("\n")
        .filter((line) => line.startsWith('{"verified"'))
        .map((line) => JSON.parse(line) as { verified: string; type: string; stream: string; at: string });

    expect(await cli("clock")).toMatch(/^Test clock: \S+Z, 0s ahead of real time \(offset 0 s\)/);

    // sim:never-joins: preparing until the 5-minute time-out, then error and stream.error, signed and verified.
    const never = await partner("never-joins");
    expect(never).toMatchObject({ status: "preparing", test: true });
    expect(await cli("clock", "advance", "5m")).toContain("Advanced the test clock by 5m");
    const failed = await partner("get", never.stream_id);
    expect(failed).toMatchObject({ status: "error", started_at: null });
    expect(Date.parse(failed.ended_at) - Date.parse(never.created_at)).toBe(5 * MINUTE);
    const errorEvent = await until(
      () => verified().find((event) => event.type === "stream.error"),
      "stream.error verified by the receiver",
    );
    expect(errorEvent).toMatchObject({ stream: never.stream_id, at: failed.ended_at });

    // duration_minutes 30: advance 31 minutes, ended 30 minutes after it went live.
    const thirty = await partner("thirty-minutes");
    expect(thirty.status).toBe("live");
    await cli("clock", "advance", "31m");
    const ended = await partner("get", thirty.stream_id);
    expect(ended.status).toBe("ended");
    expect(Date.parse(ended.ended_at) - Date.parse(ended.started_at)).toBe(30 * MINUTE);
    await until(
      () => verified().find((event) => event.type === "stream.ended" && event.stream === thirty.stream_id),
      "stream.ended verified by the receiver",
    );

    // A receiver that fails: its first attempt is made at once, the five retries after 9 hours.
    const failing = await partner("failing-webhook", `http://127.0.0.1:${port}/failing`);
    await partner("stream");
    const first = await until(async () => {
      const delivery = await partner("delivery", failing.webhook_id);
      return delivery?.attempt === 1 ? delivery : undefined;
    }, "the first attempt");
    expect(first.status).toBe("pending");
    const started = Date.now();
    await cli("clock", "advance", "9h");
    const done = await until(async () => {
      const detail = await partner("attempts", first.delivery_id);
      return detail.delivery.status === "failed" ? detail : undefined;
    }, "the delivery to fail");
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(done.delivery).toMatchObject({ attempt: 6, response_status: 500, next_attempt_at: null });
    expect(done.attempts.map((attempt: { attempt: number }) => attempt.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    const times: number[] = done.attempts.map((attempt: { attempted_at: string }) => Date.parse(attempt.attempted_at));
    const gaps = times.slice(1).map((time, i) => Math.round((time - times[i]!) / 1000) * 1000);
    expect(gaps).toEqual([MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR]);
    expect(received.match(/"failing":/g)).toHaveLength(6);
    const shown = await cli("deliveries", "show", first.delivery_id);
    expect(shown.match(/series 0 attempt \d: HTTP 500/g)).toHaveLength(6);

    const clock = await partner("clock");
    expect(clock.offset_seconds).toBe((5 + 31 + 9 * 60) * 60);
    expect(received).not.toContain("refused");
  }, 180_000);
});
