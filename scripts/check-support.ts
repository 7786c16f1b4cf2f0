/**
 * Shared by `npm run check:generators` and `npm run check:postman`: pinned third-party tools
 * installed into a scratch folder from the npm registry (never into the project), and a sandbox
 * server (server/main.ts on an in-memory database, operator API on) to call.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./docs-paths.ts";

/** A scratch folder; removed by `remove()` unless KEEP_CHECK_DIR is set (to read the generated code). */
export function scratchDir(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `${prefix}-`));
  return {
    path,
    remove() {
      if (process.env.KEEP_CHECK_DIR) console.log(`kept ${path}`);
      else rmSync(path, { recursive: true, force: true });
    },
  };
}

/** Installs exact versions into `dir` (an ES module package), without running install scripts. */
export function installPinned(dir: string, packages: Record<string, string>): void {
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "scratch", private: true, type: "module" }, null, 2));
  const specs = Object.entries(packages).map(([name, version]) => `${name}@${version}`);
  console.log(`installing ${specs.join(" ")} into ${dir}`);
  execFileSync("npm", ["install", "--save-exact", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error", ...specs], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
}

export interface Sandbox {
  /** `http://127.0.0.1:<port>`: the server's origin. */
  origin: string;
  apiBase: string;
  adminBase: string;
  adminToken: string;
  /** What the server printed, for a failure report. */
  output(): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** server/main.ts as a child process on a free port, an in-memory database and a random ADMIN_TOKEN. */
export async function startSandbox(): Promise<Sandbox> {
  const port = await freePort();
  const adminToken = `sandbox-${randomBytes(16).toString("hex")}`;
  const origin = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "server/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: "memory:", PORT: String(port), ADMIN_TOKEN: adminToken, PUBLIC_BASE_URL: origin },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let printed = "";
  child.stdout?.on("data", (chunk) => (printed += chunk));
  child.stderr?.on("data", (chunk) => (printed += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the sandbox server exited (${child.exitCode}):\n${printed}`);
    const ready = await fetch(`${origin}/api/v1/creators`).then((response) => response.ok, () => false);
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill("SIGTERM");
      throw new Error(`the sandbox server did not answer GET /api/v1/creators within 60 s:\n${printed}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    origin,
    apiBase: `${origin}/api/v1`,
    adminBase: `${origin}/admin/v1`,
    adminToken,
    output: () => printed,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** A growth brand and an all-scopes test key, made through the operator API (conformance/tenants.ts does the same). */
export async function provisionTenant(sandbox: Sandbox, name: string): Promise<{ brandId: string; key: string }> {
  const admin = async (path: string, body: unknown) => {
    const response = await fetch(`${sandbox.adminBase}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${sandbox.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status !== 201) throw new Error(`POST /admin/v1${path} answered ${response.status}: ${text}`);
    return JSON.parse(text) as Record<string, string>;
  };
  const brand = await admin("/brands", { name, vertical: "live-commerce", plan: "growth", credits_cents: 100_000 });
  const key = await admin("/keys", { brand_id: brand.brand_id, name, environment: "test", scopes: ["streams:read", "streams:write", "analytics:read", "webhooks:write"] });
  return { brandId: brand.brand_id!, key: key.key! };
}
