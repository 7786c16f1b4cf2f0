// The README's recipe for rotating a webhook secret (Webhooks: "Rotate a secret"), step by step,
// against the server with the docs' sample receiver (docs/samples/verifyWebhook.ts) running in a
// process of its own, restarted as the recipe says: every event arrives, no delivery fails, and
// the receiver handles each event id once. On both engines.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../mock/prism.ts";
import { httpsTransport } from "../providers/webhook-transport.ts";
import {
  ADMIN_TOKEN,
  availableEngines,
  type Engine,
  manualClock,
  startTestServer,
  streamBody,
  type TestServer,
} from "../../testkit/harness.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SAMPLE = join(ROOT, "docs", "samples", "verifyWebhook.ts");
const TSX = fileURLToPath(import.meta.resolve("tsx/esm"));
const EVENTS = ["stream.started", "stream.ended", "stream.error"];

/** The sample receiver on `port`, started and restarted with a WEBHOOK_SECRET as a partner would; it runs in `dir`. */
function sampleReceiver(dir: string, port: number) {
  let child: ChildProcess | undefined;
  let output = "";
  return {
    async start(secret: string) {
      // Run from a scratch directory (where it keeps its handled ids), resolving the SDK as in this repository.
      child = spawn(process.execPath, ["--import", TSX, SAMPLE], {
        cwd: dir,
        env: {
          ...process.env,
          PORT: String(port),
          WEBHOOK_SECRET: secret,
          TSX_TSCONFIG_PATH: join(ROOT, "tsconfig.json"),
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      child.stdout!.on("data", (chunk: Buffer) => (output += chunk));
      child.stderr!.on("data", (chunk: Buffer) => (output += chunk));
      // Up once an unsigned request is refused.
      const deadline = Date.now() + 30_000;
      for (;;) {
        const status = await fetch(`http://127.0.0.1:${port}/hooks`, { method: "POST", body: "{}" }).then(
          (answer) => answer.status,
          () => 0,
        );
        if (status === 400) return;
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`the sample receiver did not start:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async stop() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill();
      await exited;
    },
    output: () => output,
  };
}

describe.each(availableEngines())("the secret rotation recipe on %s", (engine: Engine) => {
  let server: TestServer;
  let receiver: ReturnType<typeof sampleReceiver>;
  let port: number;
  let dir: string;

  beforeAll(async () => {
    // The receiver checks signatures against its own clock: the server's starts now.
    server = await startTestServer({
      engine,
      clock: manualClock(new Date()),
      config: { webhookAllowHosts: ["127.0.0.1"] },
      delivery: { transport: httpsTransport({ timeoutMs: 10_000, allowHosts: ["127.0.0.1"] }), timeoutMs: 10_000 },
    });
    port = await freePort();
    dir = mkdtempSync(join(tmpdir(), "lsh-rotation-"));
    receiver = sampleReceiver(dir, port);
  }, 60_000);
  afterAll(async () => {
    await receiver?.stop();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("delivers every event, fails no delivery, and the sample receiver handles each event id once", async () => {
    const { brandId, key } = await server.tenant();
    const api = (method: string, path: string, body?: unknown) => server.call(method, `/api/v1${path}`, { key, body });
    const start = async () => (await api("POST", "/streams", streamBody())).body.stream_id as string;
    const end = async (streamId: string) => expect((await api("DELETE", `/streams/${streamId}`)).status).toBe(200);
    // The delivery worker, run until it has nothing due.
    const deliverDue = async () => {
      while ((await server.deliver()) > 0);
    };
    const url = `http://127.0.0.1:${port}/hooks`;

    // Before: one webhook, and the receiver with its secret.
    const old = (await api("POST", "/webhooks", { url, events: EVENTS })).body;
    await receiver.start(old.secret);
    const first = await start();
    await deliverDue();

    // 1. A second webhook for the same URL and events. An event before the receiver knows its
    //    secret: the old webhook's copy is handled, the new one's refused (400) for now.
    const next = (await api("POST", "/webhooks", { url, events: EVENTS })).body;
    const second = await start();
    await deliverDue();

    // 2. Both secrets, the new one first; the receiver restarted. Every event now arrives twice.
    await receiver.stop();
    await receiver.start(`${next.secret},${old.secret}`);
    await end(first);
    const third = await start();
    await deliverDue();

    // 3. A minute: the refused copy is retried and accepted, and the old webhook has nothing left.
    server.clock.advance(60_000);
    await deliverDue();

    // 4. The old webhook deleted; the new secret alone.
    expect((await api("DELETE", `/webhooks?id=${old.webhook_id}`)).status).toBe(200);
    await receiver.stop();
    await receiver.start(next.secret);
    await end(second);
    await end(third);
    await deliverDue();
    await receiver.stop();

    const deliveries: Array<{ event_id: string; webhook_id: string; status: string; attempt: number }> = (
      await server.call("GET", `/admin/v1/webhook-deliveries?brand_id=${brandId}`, { key: ADMIN_TOKEN })
    ).body.deliveries;
    const events = await server.db.query<{ id: string }>("SELECT id FROM webhook_events WHERE brand_id = $1", [
      brandId,
    ]);
    expect(events).toHaveLength(6);
    // 0 failed: every delivery succeeded, the one refused during step 1 at its second attempt.
    expect(deliveries.filter((delivery) => delivery.status !== "succeeded")).toEqual([]);
    expect(deliveries.filter((delivery) => delivery.attempt > 1)).toEqual([
      expect.objectContaining({ webhook_id: next.webhook_id, attempt: 2 }),
    ]);
    // Every event delivered; three of them twice (the overlap), the second copy answered 2xx unhandled.
    for (const { id } of events)
      expect(deliveries.filter((delivery) => delivery.event_id === id).length).toBeGreaterThan(0);
    expect(deliveries).toHaveLength(9);

    const lines = receiver.output().trim().split("\n");
    const handledIds = lines
      .filter((line) => / is (live|ended|error)$/.test(line))
      .map((line) => line.split(" ")[1]!.replace(/:$/, ""));
    expect(handledIds.sort()).toEqual(events.map((event) => event.id).sort());
    expect(lines.filter((line) => line.endsWith(": already handled"))).toHaveLength(3);
    expect(lines).toHaveLength(9);
  }, 180_000);
});
