/**
 * The SDK as partners get it: packed with `npm pack`, installed from the tarball into an empty
 * project, then used there by a plain `node` ES module (against the Prism mock and a real server
 * process), by `tsc --strict --exactOptionalPropertyTypes` under node16 and bundler resolution,
 * and through its `live-stream-hosting` command.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMock, type RunningMock } from "../mock/prism.ts";
import {
  type ConsumerProject,
  runCommand,
  type Sandbox,
  sdkConsumerProject,
  startSandbox,
} from "../scripts/partner-sandbox.ts";
import { contractVersion, formatBytes, readManifest, ROOT, type PackedPackage } from "../scripts/sdk-package.ts";
import { createClient } from "./index.ts";

const ADMIN_TOKEN = "sdk-package-test-admin-token";
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");
// Builds, installs and starts processes: slow on a loaded machine (it takes about 30 s alone).
const STEP_TIMEOUT_MS = 90_000;

describe("sdk/package.json", () => {
  it("has the contract's info.version", async () => {
    expect(readManifest().version).toBe(await contractVersion());
  });

  it("depends on exactly openapi-fetch, pinned", () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, "sdk", "package.json"), "utf8")) as Record<string, unknown>;
    expect(manifest.dependencies).toEqual({ "openapi-fetch": "0.17.0" });
    expect(manifest).toMatchObject({
      name: "@live-stream-hosting/sdk",
      type: "module",
      sideEffects: false,
      bin: { "live-stream-hosting": expect.any(String) },
    });
  });
});

describe("the SDK installed from its tarball into an empty project", () => {
  let consumer: ConsumerProject;
  let project: string;
  let packed: PackedPackage;
  let started: Promise<[RunningMock, Sandbox]> | undefined;
  let mock: RunningMock;
  let server: Sandbox;

  beforeAll(async () => {
    // The mock and the server start while the SDK is built, packed and installed.
    started = Promise.all([
      startMock(),
      startSandbox({ ADMIN_TOKEN, SIM_AGENT_JOIN_MS: "300", SWEEP_INTERVAL_MS: "100" }),
    ]);
    started.catch(() => undefined);
    consumer = await sdkConsumerProject("lsh-sdk-package-");
    ({ dir: project, packed } = consumer);
    console.log(
      `Packed ${consumer.name} ${consumer.version}: ${formatBytes(packed.size)} packed, ${formatBytes(packed.unpackedSize)} unpacked, ${packed.files.length} files`,
    );
    writeFileSync(join(project, "node-consumer.ts"), NODE_CONSUMER);
    writeFileSync(join(project, "web-consumer.ts"), WEB_CONSUMER);
    writeFileSync(join(project, "round-trip.mjs"), ROUND_TRIP_SCRIPT);
    [mock, server] = await started;
  }, STEP_TIMEOUT_MS);

  afterAll(async () => {
    const running = await started?.catch(() => []);
    await Promise.all((running ?? []).map((process) => process.stop()));
    consumer?.remove();
  });

  it("ships the compiled SDK with the contract's types, and no tests or TypeScript sources", () => {
    expect(packed.files).toContain("dist/sdk/index.js");
    expect(packed.files).toContain("dist/sdk/web.d.ts");
    expect(packed.files).toContain("dist/generated/api.d.ts");
    expect(packed.files).toContain("README.md");
    expect(packed.files).toContain("CHANGELOG.md");
    const unwanted = packed.files.filter((file) => /\.test|test-d|test-helpers|tsconfig|(?<!\.d)\.ts$/.test(file));
    expect(unwanted).toEqual([]);
  });

  it("brings openapi-fetch and nothing of the server", () => {
    expect(installedPackages(join(project, "node_modules"))).toEqual([
      "@live-stream-hosting/sdk",
      "openapi-fetch",
      "openapi-typescript-helpers",
    ]);
  });

  it("has a /web entry whose modules import no Node built-in", () => {
    const dist = join(project, "node_modules", "@live-stream-hosting", "sdk", "dist", "sdk");
    const reached = importGraph(join(dist, "web.js"));
    expect(reached.map((file) => file.slice(dist.length + 1))).toContain("webhooks-async.js");
    const nodeImports = reached.flatMap((file) =>
      specifiers(file).filter((specifier) => specifier.startsWith("node:")),
    );
    expect(nodeImports).toEqual([]);
    expect(specifiers(join(dist, "webhooks.js"))).toContain("node:crypto");
  });

  it(
    "works from a plain node ES module against the mock and the server",
    async () => {
      const key = await server.newTestKey();
      const run = await runCommand(process.execPath, ["round-trip.mjs"], {
        cwd: project,
        env: { MOCK_BASE: mock.apiBase, SERVER_BASE: server.apiBase, API_KEY: key },
      });
      expect(run.code, run.output).toBe(0);
      expect(run.stdout).toContain("round trip ok");
    },
    STEP_TIMEOUT_MS,
  );

  // Concurrent: the two compilations take most of this file's time.
  it.concurrent.each([
    [
      "node16",
      {
        module: "node16",
        moduleResolution: "node16",
        types: ["node"],
        typeRoots: [join(ROOT, "node_modules", "@types")],
      },
      "node-consumer.ts",
    ],
    [
      "bundler",
      { module: "esnext", moduleResolution: "bundler", lib: ["es2022", "dom"], types: [] },
      "web-consumer.ts",
    ],
  ])(
    "type-checks under tsc --strict --exactOptionalPropertyTypes with %s resolution",
    async (name, options, file) => {
      const tsconfig = `tsconfig.${name}.json`;
      const compilerOptions = {
        strict: true,
        exactOptionalPropertyTypes: true,
        noEmit: true,
        target: "es2022",
        ...options,
      };
      writeFileSync(join(project, tsconfig), JSON.stringify({ compilerOptions, files: [file] }, null, 2));
      const tsc = await runCommand(process.execPath, [TSC, "-p", tsconfig], { cwd: project });
      expect(tsc.code, tsc.output).toBe(0);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "runs live-stream-hosting through npx: --help, and trigger stream.error against the server",
    async () => {
      const help = await runCommand("npx", ["--no", "--", "live-stream-hosting", "--help"], { cwd: project });
      expect(help.code, help.output).toBe(0);
      expect(help.stdout).toContain("Usage: live-stream-hosting <command> [options]");

      const key = await server.newTestKey();
      const env = { LIVE_STREAM_HOSTING_API_KEY: key, LIVE_STREAM_HOSTING_BASE_URL: server.apiBase };
      const trigger = await runCommand("npx", ["--no", "--", "live-stream-hosting", "trigger", "stream.error"], {
        cwd: project,
        env,
      });
      expect(trigger.code, trigger.output).toBe(0);
      expect(trigger.stdout).toContain("Events fired: stream.started, stream.error");
      const id = /Started stream ([0-9a-f-]{36})/.exec(trigger.stdout)?.[1];
      const api = createClient({ baseUrl: server.apiBase, apiKey: key });
      expect((await api.streams.get(id!)).status).toBe("error");
    },
    STEP_TIMEOUT_MS,
  );
});

// Run by `node` in the consumer project: nothing here is compiled or transformed.
const ROUND_TRIP_SCRIPT = `
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { ApiError, createClient, NotFoundError, signWebhookPayload, verifyWebhook, verifyWebhookAsync } from "@live-stream-hosting/sdk";
import * as web from "@live-stream-hosting/sdk/web";

const { MOCK_BASE, SERVER_BASE, API_KEY } = process.env;

// The mock answers the contract's examples.
const mock = createClient({ baseUrl: MOCK_BASE, apiKey: "svc_test_" + "0".repeat(32) });
const [mockCreator] = (await mock.creators.list()).creators;
const mocked = await mock.streams.create({ creator_id: mockCreator.id, product_name: "Mocked", platform: "youtube" });
assert.equal(typeof mocked.stream_id, "string");
const mockMissing = await mock.streams.get(mocked.stream_id, { headers: { Prefer: "code=404" } }).catch((error) => error);
assert.ok(mockMissing instanceof NotFoundError, String(mockMissing));

// The server: a full stream lifecycle with a test key.
const api = createClient({ baseUrl: SERVER_BASE, apiKey: API_KEY });
const { creators } = await api.creators.list();
const created = await api.streams.create({ creator_id: creators[0].id, product_name: "Tarball round trip", platform: "youtube", duration_minutes: 10 });
assert.equal(created.status, "live");
assert.equal((await api.streams.get(created.stream_id)).status, "live");
assert.equal((await api.streams.end(created.stream_id)).status, "ended");
const again = await api.streams.end(created.stream_id).catch((error) => error);
assert.ok(again instanceof NotFoundError && again instanceof ApiError && again instanceof Error, String(again));
assert.equal(again.status, 404);
assert.equal(again.code, "not_found");
assert.ok(again.headers instanceof Headers);
assert.match(again.headers.get("content-type"), /application\\/json/);
assert.equal(again.requestId, again.headers.get("request-id") ?? undefined);

// Webhook signatures: the Node and WebCrypto verifiers agree, from both entries.
const secret = "whsec_tarball_test_secret";
const body = JSON.stringify({ id: "evt_1", type: "stream.ended", created_at: new Date().toISOString(), data: { stream_id: created.stream_id, status: "ended" } });
const header = signWebhookPayload(body, secret);
assert.equal(verifyWebhook(body, header, secret).id, "evt_1");
assert.equal((await verifyWebhookAsync(body, header, secret)).id, "evt_1");
assert.equal((await web.verifyWebhookAsync(new TextEncoder().encode(body), header, secret)).id, "evt_1");
assert.equal(await web.signWebhookPayloadAsync(body, secret, { timestamp: 1 }), signWebhookPayload(body, secret, { timestamp: 1 }));
await assert.rejects(web.verifyWebhookAsync(body + " ", header, secret), web.WebhookSignatureMismatchError);
assert.equal(web.ApiError, ApiError, "both entries share one ApiError class");
assert.equal("verifyWebhook" in web, false);

// CommonJS callers get the same module (require of ES modules, Node 20.19+).
const required = createRequire(import.meta.url)("@live-stream-hosting/sdk");
assert.equal(required.createClient, createClient);

console.log("round trip ok");
`;

// Compiled by tsc with node16 resolution and @types/node.
const NODE_CONSUMER = `
import { ApiError, createClient, NotFoundError, verifyWebhook, verifyWebhookAsync, type ClientOptions, type StreamCreated, type WebhookEvent } from "@live-stream-hosting/sdk";
import { verifyWebhookAsync as verifyOnTheEdge } from "@live-stream-hosting/sdk/web";

// exactOptionalPropertyTypes: options read from the environment may be undefined.
const options: ClientOptions = { baseUrl: "http://localhost:8080/api/v1", apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY, retry: { maxRetries: undefined } };
const client = createClient(options);
const created: StreamCreated = await client.streams.create({ creator_id: "avt_x", product_name: "p", platform: "youtube" });
try {
  await client.streams.end(created.stream_id);
} catch (error) {
  if (error instanceof NotFoundError) {
    const code: "not_found" = error.code;
    const headers: Headers = error.headers;
    const requestId: string | undefined = error.requestId;
    console.log(code, headers.get("RateLimit-Remaining"), requestId);
  } else if (error instanceof ApiError) {
    console.log(error.status, error.code satisfies string | undefined);
  }
}
const event: WebhookEvent = verifyWebhook(Buffer.from("{}"), undefined, "whsec");
const later: Promise<WebhookEvent> = verifyWebhookAsync(new Uint8Array(), undefined, "whsec", { now: undefined });
const edge: Promise<WebhookEvent> = verifyOnTheEdge("{}", undefined, "whsec");
// @ts-expect-error platform is one of the contract's platforms
void client.streams.create({ creator_id: "avt_x", product_name: "p", platform: "myspace" });
console.log(event.type, later, edge);
`;

// Compiled by tsc with bundler resolution, the DOM library and no @types/node: a worker's view.
const WEB_CONSUMER = `
import { ConcurrencyLimitError, createClient, verifyWebhookAsync, type WebhookEvent } from "@live-stream-hosting/sdk/web";
import * as web from "@live-stream-hosting/sdk/web";

const client = createClient({ baseUrl: "https://api.example.com/api/v1", apiKey: undefined, headers: undefined });

export async function handle(request: Request): Promise<Response> {
  const event: WebhookEvent = await verifyWebhookAsync(await request.arrayBuffer(), request.headers.get("X-Service-Signature") ?? undefined, "whsec");
  try {
    await client.streams.list({ status: "live" }, { signal: AbortSignal.timeout(5_000) });
  } catch (error) {
    if (error instanceof ConcurrencyLimitError) return new Response(error.requestId ?? "", { status: 503 });
  }
  return new Response(event.type);
}
// @ts-expect-error the web entry has no node:crypto verifier
void web.verifyWebhook;
`;

/** Package names under a node_modules directory, nested ones included, sorted. */
function installedPackages(nodeModules: string): string[] {
  const names: string[] = [];
  for (const entry of readdirSync(nodeModules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    const scoped = entry.name.startsWith("@");
    const dirs = scoped
      ? readdirSync(join(nodeModules, entry.name)).map((name) => `${entry.name}/${name}`)
      : [entry.name];
    for (const name of dirs) {
      names.push(name);
      const nested = join(nodeModules, name, "node_modules");
      if (readdirSync(join(nodeModules, name)).includes("node_modules")) names.push(...installedPackages(nested));
    }
  }
  return names.sort();
}

/** Every module a relative import chain reaches from `entry`, entry included. */
function importGraph(entry: string, seen = new Set<string>()): string[] {
  if (seen.has(entry)) return [...seen];
  seen.add(entry);
  for (const specifier of specifiers(entry)) {
    if (specifier.startsWith(".")) importGraph(join(dirname(entry), specifier), seen);
  }
  return [...seen];
}

function specifiers(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const patterns = [
    /^\s*(?:import|export)\s[^;]*?\sfrom\s*["']([^"']+)["']/gm,
    /^\s*import\s*["']([^"']+)["']/gm,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
  ];
  return patterns.flatMap((pattern) => [...text.matchAll(pattern)].map((match) => match[1]!));
}
