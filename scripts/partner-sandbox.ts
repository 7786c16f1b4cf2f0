/**
 * What a partner has outside this repository, for tests that judge the toolkit from there: a
 * sandbox server started exactly as `npm start` starts it (its own process, the embedded
 * database, the demo test key it prints on first start), and an empty npm project with the SDK
 * installed from its packed tarball.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { adminClient, createTenant } from "../server/cli/admin-client.ts";
import { runServer, stop as stopProcess } from "../testkit/server-process.ts";
import { buildSdk, packSdk, type PackedPackage } from "./sdk-package.ts";

export interface Sandbox {
  /** e.g. `http://localhost:41234/api/v1`, as the server printed it. */
  apiBase: string;
  /** The all-scopes test key of the demo brand, as printed on first start. */
  demoKey: string;
  /** The demo brand's id, as printed on first start. */
  demoBrandId: string;
  /** Everything the server printed so far. */
  output(): string;
  /** With ADMIN_TOKEN in the sandbox's settings: a new brand and its all-scopes test key, made through the operator API. */
  newTestKey(): Promise<string>;
  /** SIGTERM, then resolves once the process has exited. */
  stop(): Promise<void>;
}

/**
 * `server/main.ts` in a process of its own (as `npm start` runs it) on in-memory PGlite and a free
 * port; `env` adds settings. It starts in under a second; the time-out allows for a CI machine busy
 * with the other suites (a start saw 40 s pass with nothing printed while npm packed the SDK).
 */
export async function startSandbox(env: Record<string, string> = {}, timeoutMs = 120_000): Promise<Sandbox> {
  const server = runServer({ DATABASE_URL: "memory:", ...env });
  const stop = () => stopProcess(server);
  try {
    const [, apiBase] = await server.waitFor(/API:\s+(\S+\/api\/v1)/, timeoutMs);
    const [, demoBrandId, demoKey] = await server.waitFor(
      /demo brand "[^"]*" \(([0-9a-f-]{36})\)[\s\S]*?\b(svc_test_[0-9A-Za-z]{32})\b/,
      timeoutMs,
    );
    return {
      apiBase: apiBase!,
      demoKey: demoKey!,
      demoBrandId: demoBrandId!,
      output: () => server.stdout() + server.stderr(),
      newTestKey: testKeyMaker(apiBase!, env.ADMIN_TOKEN),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Makes a new brand and its all-scopes test key through the operator API of the server at `apiBase`. */
export function testKeyMaker(apiBase: string, adminToken: string | undefined): () => Promise<string> {
  let brands = 0;
  return async () => {
    if (!adminToken) throw new Error("newTestKey needs the sandbox started with ADMIN_TOKEN");
    return (await createTestTenant(apiBase.replace(/\/api\/v1$/, "/admin/v1"), adminToken, `Sandbox brand ${++brands}`))
      .key;
  };
}

/** A growth brand with an all-scopes test key, made through the operator API at `adminBase`. */
export function createTestTenant(
  adminBase: string,
  adminToken: string,
  name: string,
): Promise<{ brandId: string; key: string }> {
  return createTenant(adminClient(adminBase, adminToken), {
    name,
    vertical: "live-commerce",
    plan: "growth",
    credits_cents: 1_000_000,
  });
}

export interface ConsumerProject {
  dir: string;
  name: string;
  version: string;
  packed: PackedPackage;
  remove(): void;
}

/** An empty ESM project in a temp directory with the SDK built, packed and installed from the tarball. */
export async function sdkConsumerProject(prefix = "lsh-consumer-"): Promise<ConsumerProject> {
  const temp = mkdtempSync(join(tmpdir(), prefix));
  try {
    const built = await buildSdk({ dir: join(temp, "package") });
    const packed = packSdk(built.dir, temp);
    const dir = join(temp, "project");
    mkdirSync(dir);
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({ name: "sdk-consumer", private: true, type: "module" }, null, 2),
    );
    const install = await runCommand(
      "npm",
      ["install", "--no-audit", "--no-fund", "--prefer-offline", "--no-package-lock", packed.tarball],
      { cwd: dir },
    );
    if (install.code !== 0) throw new Error(`npm install of ${packed.tarball} failed:\n${install.output}`);
    return {
      dir,
      name: built.name,
      version: built.version,
      packed,
      remove: () => rmSync(temp, { recursive: true, force: true }),
    };
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    throw error;
  }
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr interleaved. */
  output: string;
}

export function runCommand(
  file: string,
  args: string[],
  { cwd, env = {}, timeoutMs = 60_000 }: { cwd: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
      output += chunk;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk;
      output += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, output });
    });
  });
}
