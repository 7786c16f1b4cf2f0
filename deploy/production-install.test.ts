// The README's production install, verbatim, in a fresh copy of the repository: the server starts
// with nothing but node and its production dependencies, never writes its own tree, and refuses
// to start without its build.
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  copyFiles,
  type Finished,
  operatorEnv,
  repositoryFiles,
  ROOT,
  run,
  snapshot,
  start,
  untilReady,
  words,
} from "./checkout.ts";

/** The commands of the first `sh` block under the README's "## Production install", comments removed. */
function productionSequence(): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("\n## Production install\n"));
  const block = /```sh[^\n]*\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error("README.md has no sh block under ## Production install");
  return block
    .split("\n")
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter(Boolean);
}

/** Build tools that must not be installed where the server runs. */
const BUILD_ONLY = [
  "tsx",
  "typescript",
  "@redocly/cli",
  "@redocly/openapi-core",
  "@stoplight/prism-cli",
  "esbuild",
  "vitest",
];

const scratch = mkdtempSync(join(tmpdir(), "production-install-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const ADMIN_TOKEN = "production-install-admin-token";
const env = operatorEnv({ PORT: "0", LOG_LEVEL: "warn", ADMIN_TOKEN });
const expectSuccess = (command: string, finished: Finished) =>
  expect(finished.code, `${command}:\n${finished.output}`).toBe(0);

describe("the production install of the README, in a fresh copy of the repository", () => {
  const sequence = productionSequence();

  it("installs, builds, drops the build tools and serves with plain node, the operator CLI works; the tree is not written at start", async () => {
    expect(sequence.at(-1)).toBe("npm start");
    copyFiles(repositoryFiles(), ROOT, scratch);
    for (const command of sequence.slice(0, -1)) {
      const finished = await run(words(command), { cwd: scratch, env });
      expectSuccess(command, finished);
      expect(finished.output, command).not.toMatch(/EBADENGINE/);
      // npm ci alone builds (prepare): the README's first command, npm ci && npm start, needs nothing more.
      if (command === "npm ci") expect(existsSync(join(scratch, "build", "contract", "server.json"))).toBe(true);
    }
    expect(BUILD_ONLY.filter((name) => existsSync(join(scratch, "node_modules", name)))).toEqual([]);
    expect(existsSync(join(scratch, "node_modules", "express"))).toBe(true);

    const before = snapshot(scratch, ["node_modules", ".data"]);
    const server = start(words("npm start"), { cwd: scratch, env });
    try {
      const origin = await untilReady(server);
      expect((await fetch(`${origin}/api/v1/creators`)).status).toBe(200);
      const docs = await fetch(`${origin}/docs/openapi.yaml`);
      expect(docs.status).toBe(200);
      expect(await docs.text()).toContain(`url: ${origin.replace("127.0.0.1", "localhost")}/api/v1`);
      const admin = await run(words("npm run admin -- brands list"), {
        cwd: scratch,
        env: { ...env, PORT: new URL(origin).port },
      });
      expectSuccess("npm run admin -- brands list", admin);
      expect(admin.output).toContain("Demo Brand");
    } finally {
      server.process.kill("SIGTERM");
    }
    const [code] = await new Promise<[number | null]>((resolve) =>
      server.process.once("exit", (exit) => resolve([exit])),
    );
    expect(code, server.output()).toBe(0);
    expect(snapshot(scratch, ["node_modules", ".data"])).toEqual(before);
  }, 900_000);

  it("refuses to start on a build older than openapi.yaml, and without a build, saying to run npm run build", async () => {
    appendFileSync(join(scratch, "openapi.yaml"), "# edited after the build\n");
    const stale = await run(words("npm start"), { cwd: scratch, env });
    expect(stale.code).toBe(1);
    expect(stale.output).toMatch(
      /build\/contract\/server\.json was built from another .*openapi\.yaml than the one there now\. Fix: run npm run build/,
    );

    rmSync(join(scratch, "build"), { recursive: true });
    const missing = await run(words("npm start"), { cwd: scratch, env });
    expect(missing.code).toBe(1);
    expect(missing.output).toMatch(/build\/contract\/server\.json is missing: .* Fix: run npm run build/);
  }, 120_000);
});
