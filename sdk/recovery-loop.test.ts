// The partner's recovery from outside: the SDK installed from its packed tarball in an empty
// project, a server in its own process (the embedded database, and PostgreSQL when the leg has
// one). A receiver (in the project, verifying with the SDK's verifyWebhook) answers 500 while it
// is "down": every delivery fails its attempts. The partner lists the failed deliveries and reads
// the receiver's answers with the CLI, fixes the receiver, and runs `recover`: every missed event
// arrives once more, with its original id, verified.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../mock/prism.ts";
import { availableEngines } from "../testkit/harness.ts";
import { type EngineServer, startServerOn, until } from "../testkit/engine-server.ts";
import { type ConsumerProject, runCommand, sdkConsumerProject } from "../scripts/partner-sandbox.ts";

const ADMIN_TOKEN = "recovery-loop-admin-token-0123456789abcdef";

/** The partner's receiver: 500 while the file `down` exists, else verifies and prints each event. */
const RECEIVER = `
import { createServer } from "node:http";
import { existsSync } from "node:fs";
import { verifyWebhook } from "@live-stream-hosting/sdk";
const secret = process.env.WEBHOOK_SECRET;
createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    if (existsSync("down")) {
      res.writeHead(500, { "content-type": "application/json" }).end('{"error":"receiver down: database unavailable"}');
      return;
    }
    try {
      const event = verifyWebhook(body, req.headers["x-service-signature"], secret);
      console.log(JSON.stringify({ verified: event.id, type: event.type }));
      res.writeHead(200).end("ok");
    } catch (error) {
      console.log(JSON.stringify({ refused: String(error) }));
      res.writeHead(400).end("bad signature");
    }
  });
}).listen(Number(process.env.PORT), "127.0.0.1", () => console.log("listening"));
`;

/** Sets up through the SDK: a webhook to the receiver and a stream started then ended (two events). */
const SETUP = `
import { createClient } from "@live-stream-hosting/sdk";
const client = createClient({ baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL, apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY });
const webhook = await client.webhooks.create({ url: process.env.RECEIVER_URL, events: ["stream.started", "stream.ended"] });
const stream = await client.streams.create({ creator_id: "avt_Qfmm3FkkaQM0", product_name: "Recovery drill", platform: "youtube" });
await client.streams.end(stream.stream_id);
console.log(JSON.stringify({ webhookId: webhook.webhook_id, secret: webhook.secret, streamId: stream.stream_id }));
`;

let project: ConsumerProject;
beforeAll(async () => {
  project = await sdkConsumerProject("lsh-recovery-loop-");
  writeFileSync(join(project.dir, "receiver.mjs"), RECEIVER);
  writeFileSync(join(project.dir, "setup.mjs"), SETUP);
}, 180_000);
afterAll(() => project?.remove());

describe.each(availableEngines())("recovering missed webhook events from the installed SDK, on %s", (engine) => {
  let server: EngineServer;
  let receiver: ChildProcess | undefined;
  beforeAll(async () => {
    // Three attempts (two retries, 300 ms apart) so that deliveries fail within a second.
    server = await startServerOn(engine, {
      ADMIN_TOKEN,
      WEBHOOK_RETRY_SCHEDULE_MS: "300,300",
      WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
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

  it("lists the failures, shows the receiver's answers, and recovers every event with its original id", async () => {
    const env = {
      LIVE_STREAM_HOSTING_BASE_URL: server.apiBase,
      LIVE_STREAM_HOSTING_API_KEY: await server.newTestKey(),
    };
    const cli = (...args: string[]) =>
      runCommand(join(project.dir, "node_modules", ".bin", "live-stream-hosting"), args, { cwd: project.dir, env });
    const port = await freePort();
    writeFileSync(join(project.dir, "down"), "");
    const setup = await runCommand(process.execPath, ["setup.mjs"], {
      cwd: project.dir,
      env: { ...env, RECEIVER_URL: `http://127.0.0.1:${port}/hooks` },
    });
    expect(setup.code, setup.output).toBe(0);
    const { webhookId, secret, streamId } = JSON.parse(setup.stdout.trim().split("\n").at(-1)!);

    receiver = spawn(process.execPath, ["receiver.mjs"], {
      cwd: project.dir,
      env: { ...process.env, PORT: String(port), WEBHOOK_SECRET: secret },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let received = "";
    receiver.stdout!.on("data", (chunk: Buffer) => (received += chunk));
    receiver.stderr!.on("data", (chunk: Buffer) => (received += chunk));
    await until(() => (received.includes("listening") ? true : undefined), "the receiver to listen", {
      timeoutMs: 60_000,
      everyMs: 200,
    });

    // Both deliveries fail all three attempts.
    const failed = await until(
      async () => {
        const listed = await cli("deliveries", "list", "--status", "failed", "--stream", streamId);
        expect(listed.code, listed.output).toBe(0);
        const lines = listed.stdout.split("\n").filter((line) => line.includes(" failed "));
        return lines.length === 2 ? lines : undefined;
      },
      "two failed deliveries",
      { timeoutMs: 60_000, everyMs: 200 },
    );
    const deliveryIds = failed.map((line) => /([0-9a-f-]{36})\s+HTTP 500/.exec(line)![1]!);
    const eventIds = failed.map((line) => /(evt_[0-9a-f]{32})/.exec(line)![1]!).sort();

    const shown = await cli("deliveries", "show", deliveryIds[0]!);
    expect(shown.code, shown.output).toBe(0);
    // Three attempts, each shown; on a loaded machine one may time out rather than read the 500.
    expect(shown.stdout.match(/series 0 attempt \d: /g)).toHaveLength(3);
    expect(shown.stdout).toMatch(/series 0 attempt \d: HTTP 500/);
    expect(shown.stdout).toContain('answer: {"error":"receiver down: database unavailable"}');
    expect(received).not.toContain("verified");

    // The receiver is fixed; everything that failed in the last hour is sent again.
    rmSync(join(project.dir, "down"));
    const recovered = await cli("recover", "--webhook", webhookId, "--since", "1h");
    expect(recovered.code, recovered.output).toBe(0);
    expect(recovered.stdout).toContain("Queued 2 failed deliveries");

    const verified = await until(
      () => {
        const ids = [...received.matchAll(/"verified":"(evt_[0-9a-f]{32})"/g)].map((match) => match[1]!);
        return ids.length >= 2 ? ids.sort() : undefined;
      },
      "both events verified by the receiver",
      { timeoutMs: 60_000, everyMs: 200 },
    );
    expect(verified).toEqual(eventIds);
    expect(received).not.toContain("refused");
    const after = await cli("deliveries", "show", deliveryIds[0]!);
    expect(after.stdout).toMatch(/series 1 attempt 1, recover by svc_test_…\w{4}: HTTP 200/);
  }, 180_000);
});
