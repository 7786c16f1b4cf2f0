// The partner's loop from outside, as issue 26 asks to show it: the SDK installed from its packed
// tarball in an empty project; `live-stream-hosting listen --forward-to` against a sandbox server
// (its own process) forwards what `live-stream-hosting trigger stream.started` causes to the docs'
// sample receiver, which verifies each event with the secret listen printed; the connection cut
// and restored mid-run (through a TCP proxy) loses no event.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../mock/prism.ts";
import { startTcpProxy, type TcpProxy } from "../testkit/tcp-proxy.ts";
import {
  type ConsumerProject,
  runCommand,
  type Sandbox,
  sdkConsumerProject,
  startSandbox,
} from "../scripts/partner-sandbox.ts";
import { ROOT } from "../scripts/sdk-package.ts";

const TSX = fileURLToPath(import.meta.resolve("tsx/esm"));

let sandbox: Sandbox;
let project: ConsumerProject;
let proxy: TcpProxy;
const children: ChildProcess[] = [];

function start(command: string, args: string[], env: Record<string, string>) {
  const child = spawn(command, args, {
    cwd: project.dir,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk));
  return { child, output: () => output };
}

async function until(condition: () => boolean, what: string, output: () => string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; output:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  [sandbox, project] = await Promise.all([
    startSandbox({ SWEEP_INTERVAL_MS: "100" }),
    sdkConsumerProject("lsh-partner-loop-"),
  ]);
  proxy = await startTcpProxy(Number(new URL(sandbox.apiBase).port));
  copyFileSync(join(ROOT, "docs", "samples", "verifyWebhook.ts"), join(project.dir, "verifyWebhook.ts"));
}, 180_000);

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = once(child, "exit");
    child.kill();
    await exited;
  }
  await proxy?.close();
  await sandbox?.stop();
  project?.remove();
});

describe("listen → trigger → a local receiver, from the installed SDK", () => {
  it("forwards every event, verified with the printed secret, across a cut connection", async () => {
    const bin = join(project.dir, "node_modules", ".bin", "live-stream-hosting");
    const port = await freePort();
    // listen reaches the sandbox through the proxy; trigger goes direct.
    const listenEnv = {
      LIVE_STREAM_HOSTING_API_KEY: sandbox.demoKey,
      LIVE_STREAM_HOSTING_BASE_URL: sandbox.apiBase.replace(/:\d+\//, `:${proxy.port}/`),
    };
    const listener = start(bin, ["listen", "--forward-to", `http://127.0.0.1:${port}/hooks`], listenEnv);
    await until(
      () => listener.output().includes("Connected; waiting for events."),
      "listen to connect",
      listener.output,
    );
    const secret = /Signing secret of this session: (whsec_\S+)/.exec(listener.output())![1]!;

    const receiver = start(process.execPath, ["--import", TSX, "verifyWebhook.ts"], {
      PORT: String(port),
      WEBHOOK_SECRET: secret,
    });
    // Up once an unsigned request is refused.
    for (const deadline = Date.now() + 30_000; ; ) {
      const status = await fetch(`http://127.0.0.1:${port}/hooks`, { method: "POST", body: "{}" }).then(
        (answer) => answer.status,
        () => 0,
      );
      if (status === 400) break;
      if (Date.now() > deadline) throw new Error(`the sample receiver did not start:\n${receiver.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const triggerEnv = { LIVE_STREAM_HOSTING_API_KEY: sandbox.demoKey, LIVE_STREAM_HOSTING_BASE_URL: sandbox.apiBase };
    const trigger = async () => {
      const result = await runCommand(bin, ["trigger", "stream.started"], { cwd: project.dir, env: triggerEnv });
      expect(result.code, result.output).toBe(0);
      return /Started stream ([0-9a-f-]{36})/.exec(result.stdout)![1]!;
    };

    const first = await trigger();
    await until(
      () => receiver.output().includes(`stream.ended`) && receiver.output().includes(`stream ${first} is ended`),
      "the first stream's events",
      () => listener.output() + receiver.output(),
    );

    // The network hangs, events happen, then the connection is cut and the network comes back.
    proxy.pause();
    const second = await trigger();
    proxy.cutAll();
    proxy.resume();
    await until(
      () => receiver.output().includes(`stream ${second} is ended`),
      "the second stream's events",
      () => listener.output() + receiver.output(),
    );

    const lines = receiver.output().trim().split("\n");
    for (const id of [first, second]) {
      expect(lines.filter((line) => line.endsWith(`stream ${id} is live`))).toHaveLength(1);
      expect(lines.filter((line) => line.endsWith(`stream ${id} is ended`))).toHaveLength(1);
    }
    expect(lines.some((line) => line.includes("already handled"))).toBe(false);
    expect(listener.output()).toMatch(/Reconnected; resuming after evt_/);
    expect(listener.output()).toMatch(new RegExp(`stream\\.started\\s+evt_[0-9a-f]{32}  stream ${second}  → 204`));
  }, 120_000);
});
