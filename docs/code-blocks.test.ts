/**
 * Every code block of README.md, sdk/README.md and docs/*.md runs, so none can rot; a new block
 * is picked up without editing this file (scripts/markdown-code-blocks.ts reads them and says how
 * a block's info string directs its run):
 *
 * - TypeScript: in a fresh `npm init -y` project with the settings README.md states (`"type":
 *   "module"`, its tsconfig.json block) and the SDK installed from its tarball, all compiled
 *   under `tsc --strict`; `run=sandbox` ones are then run with node against a sandbox server.
 * - JavaScript: run with plain node in that project.
 * - Shell: with bash (`-euo pipefail`) in a scratch copy of the repository, against a sandbox
 *   server (`env=sandbox`) or the mock (`env=mock`); it must exit 0, and a block that calls the API
 *   with curl must print JSON answers, none an API error unless the block is `expect=error`.
 * - A block marked `skip="why"` is not run: the test prints it and why. Other languages (output,
 *   data) are text and are not run.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningMock, startMock } from "../mock/prism.ts";
import {
  type CodeBlock,
  codeBlocks,
  documentedFiles,
  JAVASCRIPT,
  ROOT,
  SHELL,
  TYPESCRIPT,
} from "../scripts/markdown-code-blocks.ts";
import { runCommand, type Sandbox, startSandbox } from "../scripts/partner-sandbox.ts";
import { buildSdk, packSdk } from "../scripts/sdk-package.ts";

const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");
const blocks = documentedFiles().flatMap((file) => codeBlocks(file));
const runnable = (block: CodeBlock) =>
  SHELL.has(block.lang) || TYPESCRIPT.has(block.lang) || JAVASCRIPT.has(block.lang);
const skipped = blocks.filter((block) => runnable(block) && block.attributes.skip !== undefined);
const toRun = blocks.filter((block) => runnable(block) && block.attributes.skip === undefined);
const text = blocks.filter((block) => !runnable(block));
const typescript = toRun.filter((block) => TYPESCRIPT.has(block.lang));
/** Each TypeScript block's file name in the project, by its place in the docs. */
const tsFile = new Map(typescript.map((block, i) => [block, `block-${i + 1}.ts`]));

let temp: string;
let project: string;
let scratch: string;
let sandbox: Sandbox | undefined;
let mock: RunningMock | undefined;

/** The partner's project: `npm init -y`, README.md's settings, the SDK's tarball, and what the samples import. */
async function partnerProject(): Promise<string> {
  const dir = join(temp, "project");
  mkdirSync(dir);
  const built = await buildSdk({ dir: join(temp, "package") });
  const packed = packSdk(built.dir, temp);
  execFileSync("npm", ["init", "-y"], { cwd: dir, stdio: "ignore" });
  execFileSync("npm", ["pkg", "set", "type=module"], { cwd: dir, stdio: "ignore" });
  const install = await runCommand("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", packed.tarball], {
    cwd: dir,
  });
  if (install.code !== 0) throw new Error(`npm install of ${packed.tarball} failed:\n${install.output}`);
  // What the samples import besides the SDK (Express, Node's types): this repository's copies.
  for (const name of ["express", "@types"])
    symlinkSync(join(ROOT, "node_modules", name), join(dir, "node_modules", name));
  // Files of skipped blocks (a sample that needs generated code) are another check's to write.
  for (const block of blocks.filter(
    (candidate) =>
      candidate.attributes.file !== undefined && candidate.attributes.skip === undefined && !SHELL.has(candidate.lang),
  )) {
    writeFileSync(join(dir, block.attributes.file!), block.code);
  }
  for (const [block, name] of tsFile) writeFileSync(join(dir, name), block.code);
  return dir;
}

/** The repository's tracked files and its build, with node_modules linked in: what a shell block may change is a copy. */
function scratchCopy(): string {
  const dir = join(temp, "checkout");
  const files = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" }).split("\0").filter(Boolean);
  for (const file of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(ROOT, file), join(dir, file));
  }
  cpSync(join(ROOT, "build"), join(dir, "build"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

beforeAll(async () => {
  temp = mkdtempSync(join(tmpdir(), "lsh-code-blocks-"));
  const needs = new Set(toRun.map((block) => block.attributes.env ?? block.attributes.run));
  [project, sandbox, mock] = await Promise.all([
    partnerProject(),
    needs.has("sandbox") ? startSandbox() : undefined,
    needs.has("mock") ? startMock() : undefined,
  ]);
  scratch = scratchCopy();
}, 180_000);

afterAll(async () => {
  console.log(
    `Code blocks of ${documentedFiles().length} Markdown files: ${toRun.length} run, ${skipped.length} skipped, ${text.length} text (output, data) not run.`,
  );
  for (const block of skipped) console.log(`  skipped ${block.where} (${block.lang}): ${block.attributes.skip}`);
  await Promise.all([sandbox?.stop(), mock?.stop()]);
  if (temp) rmSync(temp, { recursive: true, force: true });
});

/** The JSON values printed one after another (curl prints each answer without a separator). */
function jsonValues(output: string): unknown[] {
  const values: unknown[] = [];
  let rest = output.trim();
  while (rest) {
    const end = [...rest.matchAll(/[}\]]/g)]
      .map((match) => match.index! + 1)
      .find((at) => {
        try {
          JSON.parse(rest.slice(0, at));
          return true;
        } catch {
          return false;
        }
      });
    if (end === undefined) throw new Error(`not JSON: ${rest.slice(0, 200)}`);
    values.push(JSON.parse(rest.slice(0, end)));
    rest = rest.slice(end).trim();
  }
  return values;
}

/** The placeholders a reader fills in (the key npm start printed, the local URLs), filled in. */
function filledIn(code: string, env: string | undefined): string {
  if (env === "sandbox") {
    return code.replaceAll("svc_test_…", sandbox!.demoKey).replaceAll("http://localhost:8080/api/v1", sandbox!.apiBase);
  }
  if (env === "mock") return code.replaceAll("http://127.0.0.1:4010/api/v1", mock!.apiBase);
  return code;
}

describe("the docs' code blocks", () => {
  it("are all known to the test: each shell, TypeScript or JavaScript block runs or says why not", () => {
    expect(toRun.length + skipped.length).toBeGreaterThan(0);
    for (const block of skipped) expect(block.attributes.skip, block.where).not.toBe("");
    const unknownEnv = toRun.filter(
      (block) => ![undefined, "sandbox", "mock"].includes(block.attributes.env ?? block.attributes.run),
    );
    expect(unknownEnv.map((block) => block.where)).toEqual([]);
  });

  it("TypeScript: every block compiles under tsc --strict in the partner's project", async () => {
    const result = await runCommand(process.execPath, [TSC, "-p", "tsconfig.json", "--strict", "--noEmit"], {
      cwd: project,
      timeoutMs: 120_000,
    });
    // tsc names files; name the docs' places instead.
    let output = result.output;
    for (const [block, name] of tsFile) output = output.replaceAll(name, `${name} (${block.where})`);
    expect(output).toBe("");
    expect(result.code).toBe(0);
  }, 150_000);

  for (const block of toRun.filter(
    (candidate) => TYPESCRIPT.has(candidate.lang) && candidate.attributes.run === "sandbox",
  )) {
    it(`${block.where}: the TypeScript runs against a sandbox with the installed SDK`, async () => {
      const env = { LIVE_STREAM_HOSTING_BASE_URL: sandbox!.apiBase, LIVE_STREAM_HOSTING_API_KEY: sandbox!.demoKey };
      const result = await runCommand(process.execPath, [tsFile.get(block)!], { cwd: project, env });
      expect(result.code, result.output).toBe(0);
      expect(result.stderr).toBe("");
    }, 60_000);
  }

  for (const block of toRun.filter((candidate) => JAVASCRIPT.has(candidate.lang))) {
    it(`${block.where}: the JavaScript runs under plain node`, async () => {
      const file = block.attributes.file ?? `block-${block.where.replace(/\W/g, "-")}.mjs`;
      if (!block.attributes.file) writeFileSync(join(project, file), block.code);
      const result = await runCommand(process.execPath, [file], { cwd: project });
      expect(result.code, result.output).toBe(0);
    });
  }

  for (const block of toRun.filter((candidate) => SHELL.has(candidate.lang))) {
    it(`${block.where}: the shell commands run in a scratch copy${block.attributes.env ? ` against the ${block.attributes.env}` : ""}`, async () => {
      // The variables the README has the reader export first, set as a reader following it has them.
      const env: Record<string, string> =
        block.attributes.env === "sandbox"
          ? { LIVE_STREAM_HOSTING_BASE_URL: sandbox!.apiBase, LIVE_STREAM_HOSTING_API_KEY: sandbox!.demoKey }
          : block.attributes.env === "mock"
            ? { LIVE_STREAM_HOSTING_BASE_URL: mock!.apiBase, LIVE_STREAM_HOSTING_API_KEY: `svc_test_${"0".repeat(32)}` }
            : {};
      const result = await runCommand("bash", ["-euo", "pipefail", "-c", filledIn(block.code, block.attributes.env)], {
        cwd: scratch,
        env,
        timeoutMs: 120_000,
      });
      expect(result.code, result.output).toBe(0);
      if (!/\bcurl\b/.test(block.code)) return;
      const answers = jsonValues(result.stdout);
      expect(answers.length, result.output).toBeGreaterThan(0);
      const errors = answers.filter((answer) => typeof answer === "object" && answer !== null && "error" in answer);
      if (block.attributes.expect === "error") expect(errors.length, result.output).toBe(answers.length);
      else expect(errors, result.output).toEqual([]);
    }, 150_000);
  }
});
