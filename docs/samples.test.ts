/**
 * Every code sample of the docs page runs, so none can rot: the curl and TypeScript (SDK) sample
 * of each public operation, and the webhook page's verification sample. They run as a partner
 * would run them: against a sandbox server started as `npm start` starts it (its demo test key),
 * the TypeScript ones in an empty project with the SDK installed from its tarball, after they
 * type-check there under `--strict --exactOptionalPropertyTypes`. Each sample reads only the
 * variables the docs name: LIVE_STREAM_HOSTING_BASE_URL, LIVE_STREAM_HOSTING_API_KEY, STREAM_ID,
 * WEBHOOK_ID, DELIVERY_ID, REQUEST_ID, WEBHOOK_SECRET, PORT.
 */
import { spawn } from "node:child_process";
import { copyFileSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readContract } from "../contract/load.ts";
import { createClient } from "../sdk/index.ts";
import { operationSamples, SAMPLES_DIR, sampleFile, VERIFY_SAMPLE } from "../scripts/docs-samples.ts";
import { DOCS_SPEC } from "../scripts/docs-paths.ts";
import { freePort } from "../mock/prism.ts";
import {
  type ConsumerProject,
  runCommand,
  type Sandbox,
  sdkConsumerProject,
  startSandbox,
} from "../scripts/partner-sandbox.ts";
import { ROOT } from "../scripts/sdk-package.ts";

const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");
const TSX = fileURLToPath(import.meta.resolve("tsx/esm"));
const ADMIN_TOKEN = "docs-samples-admin-token-0123456789";
const METHODS = new Set(["get", "post", "put", "patch", "delete"]);
const PUBLIC_OPERATIONS = [
  "getDiscovery",
  "listCreators",
  "createStream",
  "listStreams",
  "getStream",
  "endStream",
  "getAnalytics",
  "createWebhook",
  "listWebhooks",
  "deleteWebhook",
  "listWebhookDeliveries",
  "getWebhookDelivery",
  "retryWebhookDelivery",
  "recoverWebhookDeliveries",
  "listenTestEvents",
  "listRequests",
  "getRequest",
  "getTestClock",
  "advanceTestClock",
];
/** The event stream's samples stop themselves after a few seconds; curl reports that as exit 28. */
const STREAMING = new Set(["listenTestEvents"]);

let sandbox: Sandbox;
let project: ConsumerProject;
let client: ReturnType<typeof createClient>;
let ran = 0;

beforeAll(async () => {
  const sandboxSettings = { WEBHOOK_ALLOW_HOSTS: "127.0.0.1", SWEEP_INTERVAL_MS: "100", ADMIN_TOKEN };
  [sandbox, project] = await Promise.all([startSandbox(sandboxSettings), sdkConsumerProject("lsh-docs-samples-")]);
  client = createClient({ baseUrl: sandbox.apiBase, apiKey: sandbox.demoKey });
  // By prior arrangement, as an operator would: every sample that starts a stream keeps it live,
  // and all of them run within a minute, so the spec's limits (3 active, 100 a minute) are raised.
  const raised = await fetch(sandbox.apiBase.replace(/\/api\/v1$/, `/admin/v1/brands/${sandbox.demoBrandId}`), {
    method: "PATCH",
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
    body: JSON.stringify({ max_active_streams: 50, rate_limit_per_minute: 10_000 }),
  });
  expect(raised.status).toBe(200);
  for (const file of readdirSync(SAMPLES_DIR).filter((name) => name.endsWith(".ts")))
    copyFileSync(join(SAMPLES_DIR, file), join(project.dir, file));
}, 120_000);

afterAll(async () => {
  console.log(
    `Docs samples: ${ran} run against the sandbox (curl and TypeScript for ${PUBLIC_OPERATIONS.length} public operations, and the webhook verification sample).`,
  );
  await sandbox?.stop();
  project?.remove();
});

/** What each sample needs besides the base URL and key: a live stream to read or end, a webhook, a delivery. */
async function variablesFor(operationId: string): Promise<Record<string, string>> {
  if (operationId === "getStream" || operationId === "endStream" || operationId === "listWebhookDeliveries") {
    const stream = await client.streams.create({
      creator_id: "avt_Qfmm3FkkaQM0",
      product_name: "Docs sample",
      platform: "youtube",
    });
    return { STREAM_ID: stream.stream_id };
  }
  if (operationId === "getWebhookDelivery" || operationId === "retryWebhookDelivery") {
    // A delivery of a stream's event to a webhook: listed (written or still to come) at once.
    await client.webhooks.create({ url: "https://hooks.example.com/docs-sample", events: ["stream.started"] });
    const stream = await client.streams.create({
      creator_id: "avt_Qfmm3FkkaQM0",
      product_name: "Docs sample",
      platform: "youtube",
    });
    const { deliveries } = await client.webhooks.deliveries({ stream_id: stream.stream_id });
    return { DELIVERY_ID: deliveries[0]!.delivery_id };
  }
  if (operationId === "deleteWebhook" || operationId === "recoverWebhookDeliveries") {
    const webhook = await client.webhooks.create({
      url: "https://hooks.example.com/docs-sample",
      events: ["stream.ended"],
    });
    return { WEBHOOK_ID: webhook.webhook_id };
  }
  if (operationId === "getTestClock" || operationId === "advanceTestClock") {
    // A brand of its own: an advance moves its brand's test clock, which would make the demo
    // brand's scheduled retries (to the samples' unreachable hooks) due at once.
    return { LIVE_STREAM_HOSTING_API_KEY: await sandbox.newTestKey() };
  }
  if (operationId === "getRequest") {
    // A request of the key's, once the log has it (entries are written about half a second later).
    const { response } = await client.raw.GET("/streams", { params: { query: { limit: 1 } } });
    const requestId = response.headers.get("request-id")!;
    for (let wait = 0; wait < 50; wait++) {
      const { requests } = await client.requests.list({ path: "/streams" });
      if (requests.some((entry) => entry.request_id === requestId)) return { REQUEST_ID: requestId };
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`request ${requestId} never reached the request log`);
  }
  return {};
}

const sandboxEnv = () => ({
  LIVE_STREAM_HOSTING_BASE_URL: sandbox.apiBase,
  LIVE_STREAM_HOSTING_API_KEY: sandbox.demoKey,
});

/**
 * Runs a sample; while an event stream's sample runs, a stream is started and ended every half
 * second, so it has events to print (the ids of those streams are returned).
 */
async function runSample<T>(operationId: string, run: () => Promise<T>): Promise<{ result: T; streamIds: string[] }> {
  const streamIds: string[] = [];
  if (!STREAMING.has(operationId)) return { result: await run(), streamIds };
  let finished = false;
  const running = run().finally(() => (finished = true));
  while (!finished) {
    const stream = await client.streams.create({
      creator_id: "avt_Qfmm3FkkaQM0",
      product_name: "Docs sample",
      platform: "youtube",
    });
    streamIds.push(stream.stream_id);
    await client.streams.end(stream.stream_id);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return { result: await running, streamIds };
}

describe("the docs page's samples", () => {
  it("are the ones the published contract carries, for every public operation and webhook", async () => {
    const published = await readContract(DOCS_SPEC);
    const operations = Object.values<Record<string, any>>(published.paths).flatMap((item) =>
      Object.entries<Record<string, any>>(item)
        .filter(([method]) => METHODS.has(method))
        .map(([, operation]) => operation),
    );
    expect(operations.map((operation) => operation.operationId).sort()).toEqual([...PUBLIC_OPERATIONS].sort());
    for (const operation of operations)
      expect(operation["x-codeSamples"]).toEqual(operationSamples(operation.operationId));
    for (const item of Object.values<Record<string, any>>(published.webhooks)) {
      expect(item.post["x-codeSamples"].map((sample: { source: string }) => sample.source)).toEqual([
        readFileSync(join(SAMPLES_DIR, VERIFY_SAMPLE), "utf8").trimEnd(),
      ]);
    }
  });

  it("type-check in the partner's project under --strict --exactOptionalPropertyTypes", async () => {
    const files = readdirSync(SAMPLES_DIR).filter((name) => name.endsWith(".ts"));
    const flags = [
      "--noEmit",
      "--strict",
      "--exactOptionalPropertyTypes",
      "--skipLibCheck",
      "--target",
      "es2022",
      "--module",
      "node16",
      "--moduleResolution",
      "node16",
    ];
    const types = ["--typeRoots", join(ROOT, "node_modules", "@types"), "--types", "node"];
    const result = await runCommand(process.execPath, [TSC, ...flags, ...types, ...files], { cwd: project.dir });
    expect(result.output).toBe("");
    expect(result.code).toBe(0);
  }, 60_000);

  for (const operationId of PUBLIC_OPERATIONS) {
    it(`${operationId}: the curl sample answers 2xx with ${STREAMING.has(operationId) ? "an event stream" : "JSON"}`, async () => {
      // --fail-with-body turns a non-2xx into exit 22, so a sample that stopped working fails here.
      const script = `curl() { command curl --fail-with-body -sS "$@"; }\n${readFileSync(sampleFile(operationId, "curl"), "utf8")}`;
      const env = { ...sandboxEnv(), ...(await variablesFor(operationId)) };
      const { result, streamIds } = await runSample(operationId, () =>
        runCommand("bash", ["-euo", "pipefail", "-c", script], { cwd: project.dir, env }),
      );
      if (STREAMING.has(operationId)) {
        expect(result.code, result.output).toBe(28);
        expect(result.stdout).toMatch(/^: connected\n/);
        expect(
          streamIds.some((id) => result.stdout.includes(`"stream_id":"${id}"`)),
          result.stdout,
        ).toBe(true);
        ran++;
        return;
      }
      expect(result.code, result.output).toBe(0);
      expect(() => JSON.parse(result.stdout)).not.toThrow();
      ran++;
    });

    it(`${operationId}: the TypeScript sample runs with the installed SDK`, async () => {
      const file = `${operationId}.ts`;
      const env = { ...sandboxEnv(), ...(await variablesFor(operationId)) };
      const { result, streamIds } = await runSample(operationId, () =>
        runCommand(process.execPath, ["--import", TSX, file], { cwd: project.dir, env }),
      );
      expect(result.code, result.output).toBe(0);
      expect(result.stderr).toBe("");
      expect(result.stdout.trim()).not.toBe("");
      if (STREAMING.has(operationId))
        expect(
          streamIds.some((id) => result.stdout.includes(id)),
          result.stdout,
        ).toBe(true);
      ran++;
    });
  }

  it("the webhook verification sample receives, verifies and prints a real delivery", async () => {
    const port = await freePort();
    // Registered first, so the receiver starts with its secret, as a partner's would.
    const webhook = await client.webhooks.create({ url: `http://127.0.0.1:${port}/hooks`, events: ["stream.started"] });
    const verifier = spawn(process.execPath, ["--import", TSX, VERIFY_SAMPLE], {
      cwd: project.dir,
      env: { ...process.env, PORT: String(port), WEBHOOK_SECRET: webhook.secret },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    verifier.stdout.on("data", (chunk: Buffer) => (output += chunk));
    verifier.stderr.on("data", (chunk: Buffer) => (output += chunk));
    try {
      await waitFor(
        async () => (await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: "{}" })).status === 400,
        20_000,
        () => output,
      );
      const stream = await client.streams.create({
        creator_id: "avt_Qfmm3FkkaQM0",
        product_name: "Webhook sample",
        platform: "youtube",
      });
      await waitFor(
        async () => output.includes(`stream ${stream.stream_id} is live`),
        20_000,
        () => output,
      );
      expect(output).toMatch(new RegExp(`stream\\.started evt_\\S+: stream ${stream.stream_id} is live`));
      ran++;
    } finally {
      verifier.kill();
      await client.webhooks.delete(webhook.webhook_id);
    }
  }, 60_000);
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs: number, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms; the sample printed:\n${output()}`);
}
