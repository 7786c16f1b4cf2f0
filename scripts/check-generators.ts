/**
 * `npm run check:generators`: docs/generators.md run as written, then the operator clients it
 * describes, against a sandbox server.
 *
 * 1. The page: every block marked `check=generators`, in page order, in a new folder that holds
 *    README.md's tsconfig.json block (the settings partners are told to use). A block with
 *    `file=NAME` is written to NAME; a shell block runs with `bash -euo pipefail`, the reader's
 *    placeholders filled in (`http://localhost:8080`: the sandbox; `svc_test_…`: a test key of a
 *    new brand). So the page's own commands install the tools at its pins, download the served
 *    /docs/openapi.yaml, generate, compile each sample with `tsc` under README.md's tsconfig.json
 *    and run it. npx may not download (`npm_config_yes=false`), so a command whose tool the page
 *    did not install at a pinned version fails; the page must name each package once, exactly.
 * 2. The operator clients, made as the page's "For operators" section says (the page's config
 *    files and commands with operator.yaml, a copy of build/contract/operator.yaml), and CALLS
 *    below, compiled with the same tsconfig.json and run with the page's tsx: with each of the
 *    three generators' clients it calls the operator API and the public API, each call checked
 *    for its exact URL (the one its document gives) and status; zod validates bodies.
 *
 * Downloads the tools from the npm registry, so it is not part of `npm test`. KEEP_CHECK_DIR=1
 * keeps the folder (the project, with the generated code).
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { scopeValues } from "../generated/api.ts";
import { build, provisionTenant, scratchDir, startSandbox } from "./check-support.ts";
import { OPERATOR_SPEC } from "./docs-paths.ts";
import { commands, fillIn, GENERATORS_PAGE, pageBlocks, partnerEnv, pins, readmeTsconfig } from "./generators-page.ts";
import { SHELL } from "./markdown-code-blocks.ts";

/** The operator document's server (build/contract/operator.yaml). */
const OPERATOR_ORIGIN = "http://localhost:8080";

/**
 * Compiled with the generated code (so its use of the generated types is checked too) and run
 * with tsx against the sandbox. SANDBOX_ORIGIN, PUBLIC_ORIGIN and ADMIN_TOKEN come from the
 * environment. Imports are relative to the project's src/, where the page puts the clients.
 */
const CALLS = `
import { client as heyOperatorClient } from "./operator/live-stream-hosting/client.gen.js";
import * as heyOperator from "./operator/live-stream-hosting/sdk.gen.js";
import { client as heyPublicClient } from "./live-stream-hosting/client.gen.js";
import * as heyPublic from "./live-stream-hosting/sdk.gen.js";
import * as orvalOperator from "./operator/fetch.js";
import * as zodOperator from "./operator/zod.js";
import * as orvalPublic from "./public/fetch.js";
import * as zodPublic from "./public/zod.js";
import createClient from "openapi-fetch";
import type { paths as OperatorPaths } from "./operator-api.js";
import type { paths as PublicPaths } from "./api.js";

const sandbox = process.env.SANDBOX_ORIGIN!;
const adminToken = process.env.ADMIN_TOKEN!;
/** The origin each document names: the served public one names the sandbox; operator.yaml, localhost:8080. */
const PUBLIC = process.env.PUBLIC_ORIGIN!;
const OPERATOR = ${JSON.stringify(OPERATOR_ORIGIN)};
const ALL_SCOPES = ${JSON.stringify(scopeValues)} as const;

interface Call { method: string; url: string; status: number }
const calls: Call[] = [];
const failures: string[] = [];
const realFetch = globalThis.fetch;

/** Records each request and sends it to the sandbox, whichever of the two documented origins it names. */
async function sandboxFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const request = new Request(input, init);
  const origin = [PUBLIC, OPERATOR].find((candidate) => request.url.startsWith(candidate + "/"));
  if (!origin) throw new Error("request to an unexpected URL: " + request.url);
  const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
  const response = await realFetch(sandbox + request.url.slice(origin.length), { method: request.method, headers: request.headers, body });
  calls.push({ method: request.method, url: request.url, status: response.status });
  return response;
}
// orval's fetch client calls the global fetch; hey-api's and openapi-fetch's are given sandboxFetch below.
globalThis.fetch = sandboxFetch as typeof fetch;

/** One generated call: exactly one request, to this URL, answered with this status. */
async function step<T>(client: string, method: string, url: string, status: number, call: () => Promise<T>): Promise<T> {
  const before = calls.length;
  const expected = method + " " + url;
  let result: T;
  try {
    result = await call();
  } catch (error) {
    failures.push(client + " " + expected + ": " + String(error));
    console.log("FAIL " + client.padEnd(18) + " " + expected + " threw " + String(error));
    throw error;
  }
  const made = calls.slice(before);
  const ok = made.length === 1 && made[0]!.method + " " + made[0]!.url === expected && made[0]!.status === status;
  const seen = made.map((c) => c.method + " " + c.url + " -> " + c.status).join("; ") || "no request";
  console.log((ok ? "ok   " : "FAIL ") + client.padEnd(18) + " " + expected.padEnd(92) + " " + (ok ? String(status) : "expected " + status + ", saw " + seen));
  if (!ok) failures.push(client + " " + expected + ": expected " + status + ", saw " + seen);
  return result;
}

function must<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null) throw new Error("missing " + what);
  return value;
}

async function heyApi(): Promise<void> {
  heyOperatorClient.setConfig({ fetch: sandboxFetch, auth: adminToken });
  const brand = await step("hey-api", "POST", OPERATOR + "/admin/v1/brands", 201, () =>
    heyOperator.adminCreateBrand({ body: { name: "hey-api check", vertical: "live-commerce", plan: "growth" } }),
  );
  const brandId = must(brand.data, "brand").brand_id;
  await step("hey-api", "GET", OPERATOR + "/admin/v1/brands/" + brandId, 200, () => heyOperator.adminGetBrand({ path: { brand_id: brandId } }));
  const key = await step("hey-api", "POST", OPERATOR + "/admin/v1/keys", 201, () =>
    heyOperator.adminCreateKey({ body: { brand_id: brandId, name: "hey-api check", environment: "test", scopes: [...ALL_SCOPES] } }),
  );

  heyPublicClient.setConfig({ fetch: sandboxFetch, auth: must(key.data, "key").key });
  const creators = await step("hey-api", "GET", PUBLIC + "/api/v1/creators", 200, () => heyPublic.listCreators());
  const creatorId = must(creators.data?.creators[0], "a creator").id;
  const created = await step("hey-api", "POST", PUBLIC + "/api/v1/streams", 201, () =>
    heyPublic.createStream({ body: { creator_id: creatorId, product_name: "hey-api check", platform: "youtube" } }),
  );
  const streamId = must(created.data, "stream").stream_id;
  const list = await step("hey-api", "GET", PUBLIC + "/api/v1/streams?limit=5", 200, () => heyPublic.listStreams({ query: { limit: 5 } }));
  if (list.data?.total !== 1) failures.push("hey-api GET /streams: total " + list.data?.total + ", expected 1");
  await step("hey-api", "GET", PUBLIC + "/api/v1/streams/" + streamId, 200, () => heyPublic.getStream({ path: { id: streamId } }));
  await step("hey-api", "DELETE", PUBLIC + "/api/v1/streams/" + streamId, 200, () => heyPublic.endStream({ path: { id: streamId } }));
  await step("hey-api", "POST", PUBLIC + "/api/v1/webhooks", 201, () =>
    heyPublic.createWebhook({ body: { url: "https://hooks.brand.example/livestream", events: ["stream.started", "stream.ended"] } }),
  );
  await step("hey-api", "GET", PUBLIC + "/api/v1/webhooks", 200, () => heyPublic.listWebhooks());
}

async function orval(): Promise<void> {
  const asOperator = { headers: { Authorization: "Bearer " + adminToken } };
  const brand = await step("orval", "POST", OPERATOR + "/admin/v1/brands", 201, () =>
    orvalOperator.adminCreateBrand(zodOperator.AdminCreateBrandBody.parse({ name: "orval check", vertical: "live-commerce", plan: "growth" }), asOperator),
  );
  if (brand.status !== 201) throw new Error("brand not created");
  const brandId = brand.data.brand_id;
  const read = await step("orval", "GET", OPERATOR + "/admin/v1/brands/" + brandId, 200, () => orvalOperator.adminGetBrand(brandId, asOperator));
  zodOperator.AdminGetBrandResponse.parse(read.data);
  const key = await step("orval", "POST", OPERATOR + "/admin/v1/keys", 201, () =>
    orvalOperator.adminCreateKey(zodOperator.AdminCreateKeyBody.parse({ brand_id: brandId, name: "orval check", environment: "test", scopes: [...ALL_SCOPES] }), asOperator),
  );
  if (key.status !== 201) throw new Error("key not created");

  const asBrand = { headers: { Authorization: "Bearer " + key.data.key } };
  const creators = await step("orval", "GET", PUBLIC + "/api/v1/creators", 200, () => orvalPublic.listCreators());
  if (creators.status !== 200) throw new Error("no creators");
  const creatorId = must(zodPublic.ListCreatorsResponse.parse(creators.data).creators[0], "a creator").id;
  const body = zodPublic.CreateStreamBody.parse({ creator_id: creatorId, product_name: "orval check", platform: "twitch", duration_minutes: 30 });
  const created = await step("orval", "POST", PUBLIC + "/api/v1/streams", 201, () => orvalPublic.createStream(body, asBrand));
  if (created.status !== 201) throw new Error("stream not created");
  const streamId = zodPublic.CreateStreamResponse.parse(created.data).stream_id;
  const list = await step("orval", "GET", PUBLIC + "/api/v1/streams", 200, () => orvalPublic.listStreams(undefined, asBrand));
  if (zodPublic.ListStreamsResponse.parse(list.data).total !== 1) failures.push("orval GET /streams: total is not 1");
  const read2 = await step("orval", "GET", PUBLIC + "/api/v1/streams/" + streamId, 200, () => orvalPublic.getStream(streamId, asBrand));
  zodPublic.GetStreamResponse.parse(read2.data);
  const ended = await step("orval", "DELETE", PUBLIC + "/api/v1/streams/" + streamId, 200, () => orvalPublic.endStream(streamId, asBrand));
  zodPublic.EndStreamResponse.parse(ended.data);
  const analytics = await step("orval", "GET", PUBLIC + "/api/v1/analytics?period=24h&stream_id=" + streamId, 200, () =>
    orvalPublic.getAnalytics(zodPublic.GetAnalyticsQueryParams.parse({ period: "24h", stream_id: streamId }), asBrand),
  );
  zodPublic.GetAnalyticsResponse.parse(analytics.data);
}

async function openapiTypescript(): Promise<void> {
  const operator = createClient<OperatorPaths>({ baseUrl: OPERATOR + "/admin/v1", fetch: sandboxFetch, headers: { Authorization: "Bearer " + adminToken } });
  const brand = await step("openapi-typescript", "POST", OPERATOR + "/admin/v1/brands", 201, () =>
    operator.POST("/brands", { body: { name: "openapi-typescript check", vertical: "igaming", plan: "growth" } }),
  );
  const brandId = must(brand.data, "brand").brand_id;
  const key = await step("openapi-typescript", "POST", OPERATOR + "/admin/v1/keys", 201, () =>
    operator.POST("/keys", { body: { brand_id: brandId, name: "openapi-typescript check", environment: "test", scopes: [...ALL_SCOPES] } }),
  );
  const api = createClient<PublicPaths>({ baseUrl: PUBLIC + "/api/v1", fetch: sandboxFetch, headers: { Authorization: "Bearer " + must(key.data, "key").key } });
  const creators = await step("openapi-typescript", "GET", PUBLIC + "/api/v1/creators", 200, () => api.GET("/creators"));
  const creatorId = must(creators.data?.creators[0], "a creator").id;
  await step("openapi-typescript", "POST", PUBLIC + "/api/v1/streams", 201, () => api.POST("/streams", { body: { creator_id: creatorId, product_name: "openapi-typescript check", platform: "kick" } }));
  await step("openapi-typescript", "GET", PUBLIC + "/api/v1/streams?status=live", 200, () => api.GET("/streams", { params: { query: { status: "live" } } }));
}

for (const [name, client] of [["hey-api", heyApi], ["orval", orval], ["openapi-typescript", openapiTypescript]] as const) {
  try {
    await client();
  } catch (error) {
    if (!failures.some((failure) => failure.startsWith(name))) failures.push(name + ": " + String(error));
  }
}
console.log(calls.length + " requests, " + failures.length + " failures");
for (const failure of failures) console.log("- " + failure);
process.exitCode = failures.length ? 1 : 0;
`;

/** Replaces `from` (which must occur) in a block of the page, for the operator variant the page describes. */
function swap(code: string, from: string, to: string, where: string): string {
  if (!code.includes(from))
    throw new Error(`${where} no longer contains ${from}; update the operator steps (For operators) to match the page`);
  return code.replaceAll(from, to);
}

/** Runs shell text with bash in the project, printing it and what it prints; false when it fails. */
function bash(label: string, code: string, cwd: string, env: Record<string, string>): boolean {
  console.log(`\n== ${label}\n${code.trimEnd().replace(/^/gm, "$ ")}`);
  const result = spawnSync("bash", ["-euo", "pipefail", "-c", code], {
    cwd,
    env,
    stdio: ["ignore", "inherit", "inherit"],
    timeout: 600_000,
  });
  if (result.status === 0) return true;
  console.log(`FAILED (${result.error ?? `exit ${result.status ?? result.signal}`}): ${label}`);
  return false;
}

const steps = pageBlocks("generators");
const pinned = pins(steps);
const tsconfig = readmeTsconfig();
const results: string[] = [];
let failed = false;

const scratch = scratchDir("check-generators");
try {
  build();
  const sandbox = await startSandbox();
  try {
    // The host the served document names for the sandbox (it names itself as localhost).
    const origin = sandbox.origin.replace("127.0.0.1", "localhost");
    const { key } = await provisionTenant(sandbox, "Generators page");
    console.log(`sandbox: ${origin}; pins read from docs/generators.md: ${JSON.stringify(pinned)}`);
    const env = partnerEnv({
      LIVE_STREAM_HOSTING_BASE_URL: `${origin}/api/v1`,
      LIVE_STREAM_HOSTING_API_KEY: key,
      // npx runs what the page installed, or fails: it may not fetch a tool the page did not pin.
      npm_config_yes: "false",
    });
    const project = join(scratch.path, "project");
    mkdirSync(project);
    writeFileSync(join(project, "tsconfig.json"), tsconfig);

    // 1. The page, block by block.
    for (const block of steps) {
      const file = block.attributes.file;
      if (file !== undefined && !SHELL.has(block.lang)) {
        mkdirSync(dirname(join(project, file)), { recursive: true });
        writeFileSync(join(project, file), block.code);
        console.log(`\n== ${block.where}: wrote ${file}`);
        continue;
      }
      if (!SHELL.has(block.lang)) throw new Error(`${block.where}: a ${block.lang} block needs file=NAME to be run`);
      if (!bash(block.where, fillIn(block.code, { origin, key }), project, env)) {
        failed = true;
        results.push(`${block.where}: FAILED`);
        break;
      }
      results.push(`${block.where}: ok (${commands(block).length} commands)`);
    }

    if (!failed) {
      const manifest = JSON.parse(readFileSync(join(project, "package.json"), "utf8"));
      const installed = { ...manifest.dependencies, ...manifest.devDependencies } as Record<string, string>;
      const differ = Object.entries(pinned).filter(([name, version]) => installed[name] !== version);
      if (manifest.type !== "module" || differ.length) {
        failed = true;
        results.push(`package.json: FAILED (type ${manifest.type}; not as pinned: ${JSON.stringify(differ)})`);
      }
      if (readFileSync(join(project, "tsconfig.json"), "utf8") !== tsconfig) {
        failed = true;
        results.push("tsconfig.json: FAILED (the page's commands changed README.md's tsconfig.json)");
      }
    }

    // 2. The operator clients, as "For operators" says, and the calls with all clients.
    if (!failed) {
      const page = (file: string) => {
        const block = steps.find((candidate) => candidate.attributes.file === file);
        if (!block) throw new Error(`docs/generators.md has no ${file} block`);
        return block;
      };
      const hey = page("openapi-ts.config.js");
      const orval = page("orval.config.cjs");
      copyFileSync(OPERATOR_SPEC, join(project, "operator.yaml"));
      const heyConfig = swap(
        swap(hey.code, '"openapi.yaml"', '"operator.yaml"', hey.where),
        '"src/live-stream-hosting"',
        '"src/operator/live-stream-hosting"',
        hey.where,
      );
      writeFileSync(join(project, "openapi-ts.operator.config.js"), heyConfig);
      writeFileSync(
        join(project, "orval.config.cjs"),
        swap(
          orval.code,
          '{ public: "openapi.yaml" }',
          '{ public: "openapi.yaml", operator: "operator.yaml" }',
          orval.where,
        ),
      );
      writeFileSync(join(project, "src", "check-calls.ts"), CALLS);
      const operatorSteps = [
        "npx openapi-ts -f openapi-ts.operator.config.js",
        "npx orval --config orval.config.cjs",
        "npx openapi-typescript operator.yaml -o src/operator-api.ts",
        "npx tsc -p tsconfig.json",
        "npx tsx src/check-calls.ts",
      ].join("\n");
      const ok = bash("operator clients (For operators) and calls with every client", operatorSteps, project, {
        ...env,
        SANDBOX_ORIGIN: sandbox.origin,
        PUBLIC_ORIGIN: origin,
        ADMIN_TOKEN: sandbox.adminToken,
      });
      results.push(`operator clients and calls: ${ok ? "ok" : "FAILED"}`);
      failed ||= !ok;
    }
    if (failed) console.log(`\nsandbox output:\n${sandbox.output()}`);
  } finally {
    await sandbox.stop();
  }
} finally {
  scratch.remove();
}
console.log(
  `\n${GENERATORS_PAGE.slice(GENERATORS_PAGE.indexOf("docs/"))} pins: ${Object.entries(pinned)
    .map(([name, version]) => `${name}@${version}`)
    .join(", ")}`,
);
for (const line of results) console.log(line);
process.exitCode = failed ? 1 : 0;
