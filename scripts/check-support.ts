/**
 * Shared by `npm run check:generators` and `npm run check:postman`: a scratch folder (never the
 * project) for the third-party tools they install from the npm registry, and a sandbox server
 * (server/main.ts on an in-memory database, operator API on) to call.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runServer, serverOrigin, stop as stopProcess } from "../testkit/server-process.ts";
import { ROOT } from "./docs-paths.ts";
import { createTestTenant } from "./partner-sandbox.ts";

/** `npm run build`: the documents the checks read, and the contract their sandbox server reads. */
export function build(): void {
  for (const script of ["scripts/build-docs.ts", "scripts/build-contract.ts"])
    execFileSync(process.execPath, [script], { cwd: ROOT, stdio: "inherit" });
}

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
  execFileSync(
    "npm",
    ["install", "--save-exact", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error", ...specs],
    { cwd: dir, stdio: ["ignore", "ignore", "inherit"] },
  );
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

/** server/main.ts as a child process on a free port, an in-memory database and a random ADMIN_TOKEN. */
export async function startSandbox(): Promise<Sandbox> {
  const adminToken = `sandbox-${randomBytes(16).toString("hex")}`;
  const server = runServer({ DATABASE_URL: "memory:", ADMIN_TOKEN: adminToken });
  try {
    const origin = await serverOrigin(server);
    return {
      origin,
      apiBase: `${origin}/api/v1`,
      adminBase: `${origin}/admin/v1`,
      adminToken,
      output: () => server.stdout() + server.stderr(),
      stop: () => stopProcess(server),
    };
  } catch (error) {
    await stopProcess(server);
    throw error;
  }
}

/** A growth brand and an all-scopes test key, made through the operator API. */
export function provisionTenant(sandbox: Sandbox, name: string): Promise<{ brandId: string; key: string }> {
  return createTestTenant(sandbox.adminBase, sandbox.adminToken, name);
}
