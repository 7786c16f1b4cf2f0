/**
 * `npm run check:generators`: generates clients with third-party generators from the two built
 * documents (build/docs/openapi.yaml for /api/v1, build/contract/operator.yaml for /admin/v1),
 * compiles each under `tsc --strict`, and calls a sandbox server with them.
 *
 * - @hey-api/openapi-ts: its fetch client and SDK, one per document.
 * - orval: its fetch client and its zod schemas, one of each per document.
 * - openapi-typescript (the project's own, as for generated/api.ts) with openapi-fetch: the types
 *   of each document; openapi-typescript carries no server, so each client is given its base URL.
 *
 * The calls check the status and the exact URL each generated function builds from its document
 * (`http://localhost:8080/api/v1/…` or `…/admin/v1/…`); a fetch wrapper then sends the request to
 * the sandbox's port. Zod schemas validate the request bodies sent and the 200 responses read.
 *
 * Downloads the generators from the npm registry into a scratch folder, so it is not part of
 * `npm test`. KEEP_CHECK_DIR=1 keeps the folder (generated code included). See docs/generators.md.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DOCS_SPEC, OPERATOR_SPEC, ROOT } from "./docs-paths.ts";
import { build, installPinned, scratchDir, startSandbox } from "./check-support.ts";
import { scopeValues } from "../generated/api.ts";

/**
 * Exact pins: the generators' newest releases (both need Node 22.18 or later), zod 4, and the
 * project's own openapi-fetch and TypeScript. hey-api's peer range would take TypeScript 7, whose
 * package has no JavaScript API for it to call; its peer is pinned to the project's 5.9.
 */
const GENERATORS = {
  "@hey-api/openapi-ts": "0.99.0",
  orval: "8.38.0",
  zod: "4.6.7",
  "openapi-fetch": "0.17.0",
  typescript: "5.9.3",
} as const;

const DOCUMENTS = { public: DOCS_SPEC, operator: OPERATOR_SPEC } as const;
const TSC = `${ROOT}node_modules/typescript/bin/tsc`;
const TSX = `${ROOT}node_modules/.bin/tsx`;
const OPENAPI_TYPESCRIPT = `${ROOT}node_modules/.bin/openapi-typescript`;

const run = (command: string, args: string[], cwd: string) =>
  execFileSync(command, args, {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NO_COLOR: "1" },
  });

function orvalConfig(): string {
  const projects: Record<string, unknown> = {};
  for (const [name, target] of Object.entries(DOCUMENTS)) {
    projects[`${name}-fetch`] = {
      input: { target },
      output: {
        target: `orval-${name}/fetch.ts`,
        client: "fetch",
        mode: "single",
        baseUrl: { getBaseUrlFromSpecification: true },
      },
    };
    projects[`${name}-zod`] = {
      input: { target },
      output: { target: `orval-${name}/zod.ts`, client: "zod", mode: "single" },
    };
  }
  return `module.exports = ${JSON.stringify(projects, null, 2)};\n`;
}

function strictTsconfig(include: string[]): string {
  const compilerOptions = {
    strict: true,
    target: "ES2022",
    module: "ESNext",
    moduleResolution: "bundler",
    lib: ["ES2022", "DOM", "DOM.Iterable"],
    types: [],
    noEmit: true,
  };
  return JSON.stringify({ compilerOptions, include }, null, 2);
}

/**
 * Compiled with the generated code (so its use of the generated types is checked too) and run
 * with tsx against the sandbox. SANDBOX_ORIGIN and ADMIN_TOKEN come from the environment.
 */
const CALLS = String.raw`
import { client as heyOperatorClient } from "./hey-operator/client.gen";
import * as heyOperator from "./hey-operator/sdk.gen";
import { client as heyPublicClient } from "./hey-public/client.gen";
import * as heyPublic from "./hey-public/sdk.gen";
import * as orvalOperator from "./orval-operator/fetch";
import * as zodOperator from "./orval-operator/zod";
import * as orvalPublic from "./orval-public/fetch";
import * as zodPublic from "./orval-public/zod";
import createClient from "openapi-fetch";
import type { paths as OperatorPaths } from "./openapi-typescript/operator";
import type { paths as PublicPaths } from "./openapi-typescript/public";

// Node's types are not installed here; this is all calls.ts needs of them.
declare const process: { env: Record<string, string | undefined>; exitCode?: number };

const origin = process.env.SANDBOX_ORIGIN!;
const adminToken = process.env.ADMIN_TOKEN!;
/** The host:port both documents name; requests to it go to the sandbox instead. */
const DOCUMENTED = "http://localhost:8080";
const ALL_SCOPES = ${JSON.stringify(scopeValues)} as const;

interface Call { method: string; url: string; status: number }
const calls: Call[] = [];
const failures: string[] = [];
const realFetch = globalThis.fetch;

async function sandboxFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const request = new Request(input, init);
  if (!request.url.startsWith(DOCUMENTED + "/")) throw new Error("request to an unexpected URL: " + request.url);
  const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
  const response = await realFetch(origin + request.url.slice(DOCUMENTED.length), { method: request.method, headers: request.headers, body });
  calls.push({ method: request.method, url: request.url, status: response.status });
  return response;
}
// orval's fetch client calls the global fetch; hey-api's is given sandboxFetch below.
globalThis.fetch = sandboxFetch as typeof fetch;

/** One generated call: exactly one request, to this URL, answered with this status. */
async function step<T>(client: string, method: string, path: string, status: number, call: () => Promise<T>): Promise<T> {
  const before = calls.length;
  const expected = method + " " + DOCUMENTED + path;
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
  const brand = await step("hey-api", "POST", "/admin/v1/brands", 201, () =>
    heyOperator.adminCreateBrand({ body: { name: "hey-api check", vertical: "live-commerce", plan: "growth" } }),
  );
  const brandId = must(brand.data, "brand").brand_id;
  await step("hey-api", "GET", "/admin/v1/brands/" + brandId, 200, () => heyOperator.adminGetBrand({ path: { brand_id: brandId } }));
  const key = await step("hey-api", "POST", "/admin/v1/keys", 201, () =>
    heyOperator.adminCreateKey({ body: { brand_id: brandId, name: "hey-api check", environment: "test", scopes: [...ALL_SCOPES] } }),
  );

  heyPublicClient.setConfig({ fetch: sandboxFetch, auth: must(key.data, "key").key });
  const creators = await step("hey-api", "GET", "/api/v1/creators", 200, () => heyPublic.listCreators());
  const creatorId = must(creators.data?.creators[0], "a creator").id;
  const created = await step("hey-api", "POST", "/api/v1/streams", 201, () =>
    heyPublic.createStream({ body: { creator_id: creatorId, product_name: "hey-api check", platform: "youtube" } }),
  );
  const streamId = must(created.data, "stream").stream_id;
  const list = await step("hey-api", "GET", "/api/v1/streams?limit=5", 200, () => heyPublic.listStreams({ query: { limit: 5 } }));
  if (list.data?.total !== 1) failures.push("hey-api GET /streams: total " + list.data?.total + ", expected 1");
  await step("hey-api", "GET", "/api/v1/streams/" + streamId, 200, () => heyPublic.getStream({ path: { id: streamId } }));
  await step("hey-api", "DELETE", "/api/v1/streams/" + streamId, 200, () => heyPublic.endStream({ path: { id: streamId } }));
  await step("hey-api", "POST", "/api/v1/webhooks", 201, () =>
    heyPublic.createWebhook({ body: { url: "https://hooks.brand.example/livestream", events: ["stream.started", "stream.ended"] } }),
  );
  await step("hey-api", "GET", "/api/v1/webhooks", 200, () => heyPublic.listWebhooks());
}

async function orval(): Promise<void> {
  const asOperator = { headers: { Authorization: "Bearer " + adminToken } };
  const brand = await step("orval", "POST", "/admin/v1/brands", 201, () =>
    orvalOperator.adminCreateBrand(zodOperator.AdminCreateBrandBody.parse({ name: "orval check", vertical: "live-commerce", plan: "growth" }), asOperator),
  );
  if (brand.status !== 201) throw new Error("brand not created");
  const brandId = brand.data.brand_id;
  const read = await step("orval", "GET", "/admin/v1/brands/" + brandId, 200, () => orvalOperator.adminGetBrand(brandId, asOperator));
  zodOperator.AdminGetBrandResponse.parse(read.data);
  const key = await step("orval", "POST", "/admin/v1/keys", 201, () =>
    orvalOperator.adminCreateKey(zodOperator.AdminCreateKeyBody.parse({ brand_id: brandId, name: "orval check", environment: "test", scopes: [...ALL_SCOPES] }), asOperator),
  );
  if (key.status !== 201) throw new Error("key not created");

  const asBrand = { headers: { Authorization: "Bearer " + key.data.key } };
  const creators = await step("orval", "GET", "/api/v1/creators", 200, () => orvalPublic.listCreators());
  if (creators.status !== 200) throw new Error("no creators");
  const creatorId = must(zodPublic.ListCreatorsResponse.parse(creators.data).creators[0], "a creator").id;
  const body = zodPublic.CreateStreamBody.parse({ creator_id: creatorId, product_name: "orval check", platform: "twitch", duration_minutes: 30 });
  const created = await step("orval", "POST", "/api/v1/streams", 201, () => orvalPublic.createStream(body, asBrand));
  if (created.status !== 201) throw new Error("stream not created");
  const streamId = created.data.stream_id;
  const list = await step("orval", "GET", "/api/v1/streams", 200, () => orvalPublic.listStreams(undefined, asBrand));
  if (zodPublic.ListStreamsResponse.parse(list.data).total !== 1) failures.push("orval GET /streams: total is not 1");
  const read2 = await step("orval", "GET", "/api/v1/streams/" + streamId, 200, () => orvalPublic.getStream(streamId, asBrand));
  zodPublic.GetStreamResponse.parse(read2.data);
  const ended = await step("orval", "DELETE", "/api/v1/streams/" + streamId, 200, () => orvalPublic.endStream(streamId, asBrand));
  zodPublic.EndStreamResponse.parse(ended.data);
  const analytics = await step("orval", "GET", "/api/v1/analytics?period=24h&stream_id=" + streamId, 200, () =>
    orvalPublic.getAnalytics(zodPublic.GetAnalyticsQueryParams.parse({ period: "24h", stream_id: streamId }), asBrand),
  );
  zodPublic.GetAnalyticsResponse.parse(analytics.data);
}

async function openapiTypescript(): Promise<void> {
  const operator = createClient<OperatorPaths>({ baseUrl: DOCUMENTED + "/admin/v1", fetch: sandboxFetch, headers: { Authorization: "Bearer " + adminToken } });
  const brand = await step("openapi-typescript", "POST", "/admin/v1/brands", 201, () =>
    operator.POST("/brands", { body: { name: "openapi-typescript check", vertical: "igaming", plan: "growth" } }),
  );
  const brandId = must(brand.data, "brand").brand_id;
  const key = await step("openapi-typescript", "POST", "/admin/v1/keys", 201, () =>
    operator.POST("/keys", { body: { brand_id: brandId, name: "openapi-typescript check", environment: "test", scopes: [...ALL_SCOPES] } }),
  );
  const api = createClient<PublicPaths>({ baseUrl: DOCUMENTED + "/api/v1", fetch: sandboxFetch, headers: { Authorization: "Bearer " + must(key.data, "key").key } });
  const creators = await step("openapi-typescript", "GET", "/api/v1/creators", 200, () => api.GET("/creators"));
  const creatorId = must(creators.data?.creators[0], "a creator").id;
  await step("openapi-typescript", "POST", "/api/v1/streams", 201, () => api.POST("/streams", { body: { creator_id: creatorId, product_name: "openapi-typescript check", platform: "kick" } }));
  await step("openapi-typescript", "GET", "/api/v1/streams?status=live", 200, () => api.GET("/streams", { params: { query: { status: "live" } } }));
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

const scratch = scratchDir("check-generators");
const results: string[] = [];
let failed = false;
try {
  build();
  installPinned(scratch.path, GENERATORS);
  const bin = (name: string) => join(scratch.path, "node_modules", ".bin", name);

  for (const [name, document] of Object.entries(DOCUMENTS))
    run(bin("openapi-ts"), ["-i", document, "-o", `hey-${name}`], scratch.path);
  writeFileSync(join(scratch.path, "orval.config.cjs"), orvalConfig());
  run(bin("orval"), ["--config", "orval.config.cjs"], scratch.path);
  // Run in the scratch folder: in the project, redocly.yaml makes openapi-typescript ignore its arguments.
  for (const [name, document] of Object.entries(DOCUMENTS))
    run(OPENAPI_TYPESCRIPT, [document, "-o", `openapi-typescript/${name}.ts`], scratch.path);

  for (const folder of ["hey-public", "hey-operator", "orval-public", "orval-operator", "openapi-typescript"]) {
    writeFileSync(join(scratch.path, `tsconfig.${folder}.json`), strictTsconfig([folder]));
    try {
      run(process.execPath, [TSC, "-p", `tsconfig.${folder}.json`], scratch.path);
      results.push(`compile ${folder} (tsc --strict): ok`);
    } catch (error) {
      failed = true;
      results.push(`compile ${folder} (tsc --strict): FAILED\n${(error as { stdout?: string }).stdout ?? error}`);
    }
  }
  writeFileSync(join(scratch.path, "calls.ts"), CALLS);
  writeFileSync(join(scratch.path, "tsconfig.calls.json"), strictTsconfig(["calls.ts"]));
  try {
    run(process.execPath, [TSC, "-p", "tsconfig.calls.json"], scratch.path);
  } catch (error) {
    failed = true;
    results.push(
      `compile calls.ts against the generated clients: FAILED\n${(error as { stdout?: string }).stdout ?? error}`,
    );
  }

  if (!failed) {
    const sandbox = await startSandbox();
    try {
      console.log(`sandbox: ${sandbox.origin}`);
      execFileSync(TSX, ["calls.ts"], {
        cwd: scratch.path,
        stdio: "inherit",
        env: { ...process.env, SANDBOX_ORIGIN: sandbox.origin, ADMIN_TOKEN: sandbox.adminToken },
      });
      results.push("calls against the sandbox: ok");
    } catch {
      failed = true;
      results.push(`calls against the sandbox: FAILED\n${sandbox.output()}`);
    } finally {
      await sandbox.stop();
    }
  }
} finally {
  scratch.remove();
}
console.log(
  `\n${Object.entries(GENERATORS)
    .map(([name, version]) => `${name}@${version}`)
    .join(", ")}`,
);
for (const line of results) console.log(line);
process.exitCode = failed ? 1 : 0;
