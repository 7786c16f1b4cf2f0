/**
 * `npm run contract:diff [-- --root <checkout>]`: the release gate (part of npm test).
 *
 * Compares the public openapi.yaml (x-internal left out) with the newest
 * contract/released/<version>.yaml through `redocly diff --check-version` (rules:
 * contract/redocly-diff.yaml), adds what redocly cannot judge (./judge.ts), and checks the release
 * around the contract (./release.ts). Exits 1 when any of that fails, 2 when it cannot run.
 * `--root` checks another checkout (the tests' scratch copies).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { lt, major, valid } from "semver";
import { parseYamlText, readContract, toYamlText } from "../../contract/load.ts";
import { type SchemaAt, stricterReasons } from "./judge.ts";
import { releaseProblems, releases } from "./release.ts";
import { type DiffReport, describeChange } from "./report.ts";

const TOOL_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const REDOCLY = join(TOOL_ROOT, "node_modules", ".bin", "redocly");
const RULES = join(TOOL_ROOT, "contract", "redocly-diff.yaml");
const WORK = join("build", "contract-diff");

/**
 * `redocly diff` of the latest release and openapi.yaml, both as published, written to WORK for
 * it to read: its report, and its verdict on info.version (the lines it starts with ❌).
 */
async function redoclyDiff(root: string, latest: string): Promise<{ report: DiffReport; failures: string[] }> {
  mkdirSync(join(root, WORK), { recursive: true });
  const files: Array<[string, string]> = [
    [join("contract", "released", `${latest}.yaml`), join(WORK, `${latest}.yaml`)],
    ["openapi.yaml", join(WORK, "openapi.yaml")],
  ];
  for (const [source, published] of files) {
    writeFileSync(join(root, published), toYamlText(await readContract(join(root, source), "published")));
  }
  const report = join(WORK, "report.json");
  const options = ["--check-version", "--fail-on", "none", "--format", "json", "--output", report];
  const args = ["diff", files[0]![1], files[1]![1], "--config", RULES, ...options];
  const result = spawnSync(REDOCLY, args, { cwd: root, encoding: "utf8" });
  const failures = (result.stderr ?? "")
    .split("\n")
    .filter((line) => line.startsWith("❌"))
    .map((line) => `redocly diff: ${line.slice(1).trim()}`);
  if (result.status !== 0 && !(result.status === 1 && failures.length)) {
    throw new Error(`redocly diff failed (exit ${result.status}):\n${result.stderr}`);
  }
  return { report: JSON.parse(readFileSync(join(root, report), "utf8")) as DiffReport, failures };
}

/** Looks up the schema around a place of redocly's report, in the published files it compared. */
function schemasOf(root: string): SchemaAt {
  const documents = new Map<string, unknown>();
  return (place) => {
    if (!documents.has(place.file))
      documents.set(place.file, parseYamlText(readFileSync(join(root, place.file), "utf8")));
    const tokens = place.pointer.replace(/^#\//, "").split("/").slice(0, -1);
    let node = documents.get(place.file);
    for (const token of tokens)
      node = (node as Record<string, unknown> | undefined)?.[token.replaceAll("~1", "/").replaceAll("~0", "~")];
    return node && typeof node === "object" ? (node as Record<string, unknown>) : undefined;
  };
}

/** Prints every change with the impact it ends with; returns how many judge.ts raised to major. */
function printChanges(report: DiffReport, schemaAt: SchemaAt, print: (line: string) => void): number {
  let raised = 0;
  for (const change of report.changes) {
    const reasons = stricterReasons(change, schemaAt);
    if (reasons.length) raised += 1;
    for (const line of describeChange(change, reasons.length ? "major" : change.impact, reasons)) print(line);
  }
  const { major: majors, minor, patch } = report.summary;
  const more = raised ? `; ${raised} more major judged by contract:diff` : "";
  print(`redocly diff: ${majors} major, ${minor} minor, ${patch} patch${more}`);
  return raised;
}

function versionProblems(version: string, latest: string, raised: number): string[] {
  if (!valid(version)) return [`info.version ${version} is not MAJOR.MINOR.PATCH`];
  if (lt(version, latest)) return [`info.version ${version} is lower than the released ${latest}`];
  if (raised && major(version) <= major(latest)) {
    const next = `${major(latest) + 1}.0.0`;
    return [`info.version ${version}: the changes marked (contract:diff) need a major version (${next})`];
  }
  return [];
}

export async function runGate(root: string, print: (line: string) => void): Promise<number> {
  const problems: string[] = [];
  const latest = releases(root, problems)[0]!;
  const { report, failures } = await redoclyDiff(root, latest);
  const version = report.infoVersions.revision;
  print(`contract:diff contract/released/${latest}.yaml → openapi.yaml ${version}, public API (x-internal left out)`);
  const raised = printChanges(report, schemasOf(root), print);
  problems.push(...failures, ...versionProblems(version, latest, raised), ...releaseProblems(root, version));

  for (const problem of problems) print(`✖ ${problem}`);
  if (problems.length) {
    print(`See docs/development.md, Releases. Full report: ${join(WORK, "report.json")}`);
    return 1;
  }
  const verdict = version === latest ? "the released contract" : `a right bump from ${latest}`;
  print(`✔ ${version} is ${verdict}, with its changelog entries`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { root: { type: "string" } } });
  runGate(resolve(values.root ?? TOOL_ROOT), console.log).then(
    (code) => {
      process.exitCode = code;
    },
    (error: Error) => {
      console.error(`contract:diff: ${error.message}`);
      process.exitCode = 2;
    },
  );
}
