/**
 * `npm run contract:diff [-- --base <file>] [-- --revision <file>]`: the breaking-change gate.
 * Compares openapi.yaml with the newest released contract in contract/released/ and exits 1 on a
 * change that can break a client written against the release, unless info.version's major part
 * went up. Prints every change it sees, breaking or not, one line each, and the counts. A breaking
 * change listed with its reason in contract/accepted-changes.yaml (accepted.ts) is printed as
 * `accepted` and does not fail the gate.
 */
import { readdirSync } from "node:fs";
import { relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { readContract } from "../../contract/load.ts";
import { acceptanceOf, acceptedChanges } from "./accepted.ts";
import { compareContracts } from "./operations.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const RELEASED_DIR = resolve(ROOT, "contract/released");
export const ACCEPTED_FILE = resolve(ROOT, "contract/accepted-changes.yaml");

type Version = [number, number, number];

export function parseVersion(text: string): Version | null {
  const match = /^(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(text);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : null;
}

function compareVersions(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/**
 * A contract as partners get it: bundled (external $refs pulled in) without the operator API
 * (`x-internal`), as `npm run docs` publishes it, so the operator API is not compared. A document
 * that cannot be resolved stops the check.
 */
async function publishedContract(file: string): Promise<{ version: string; doc: Record<string, any> }> {
  const doc = await readContract(file, "published");
  const version = doc.info?.version;
  if (typeof version !== "string") throw new Error(`${file}: not an OpenAPI document with info.version`);
  return { version, doc };
}

/** The released contract with the highest version: contract/released/<version>.yaml. */
export function latestRelease(dir = RELEASED_DIR): string {
  const releases = readdirSync(dir)
    .map((file) => ({ file, version: parseVersion(file.replace(/\.ya?ml$/, "")) }))
    .filter((release): release is { file: string; version: Version } => release.version !== null && /\.ya?ml$/.test(release.file))
    .sort((a, b) => compareVersions(b.version, a.version));
  if (!releases.length) throw new Error(`no released contract (<version>.yaml) in ${dir}`);
  return resolve(dir, releases[0]!.file);
}

/** Runs the gate; resolves with the exit code. `print` gets each output line. */
export async function run(args: string[], print: (line: string) => void = console.log): Promise<number> {
  const { values } = parseArgs({ args, options: { base: { type: "string" }, revision: { type: "string" }, accepted: { type: "string" } } });
  const baseFile = resolve(values.base ?? latestRelease());
  const revisionFile = resolve(values.revision ?? resolve(ROOT, "openapi.yaml"));
  const [base, revision] = await Promise.all([publishedContract(baseFile), publishedContract(revisionFile)]);
  const [from, to] = [parseVersion(base.version), parseVersion(revision.version)];
  const name = (file: string) => (relative(process.cwd(), file).startsWith("..") ? file : relative(process.cwd(), file));
  print(`contract:diff ${name(baseFile)} (${base.version}) → ${name(revisionFile)} (${revision.version}), public API (x-internal left out)`);
  if (!from || !to) {
    print(`info.version must be MAJOR.MINOR.PATCH: ${from ? revision.version : base.version}`);
    return 1;
  }
  if (compareVersions(to, from) < 0) {
    print(`info.version ${revision.version} is lower than the released ${base.version}`);
    return 1;
  }

  const changes = compareContracts(base.doc, revision.doc);
  const acceptedList = acceptedChanges(resolve(values.accepted ?? ACCEPTED_FILE), base.version);
  const accepted = changes.filter((change) => change.severity === "breaking" && acceptanceOf(change, acceptedList));
  const breaking = changes.filter((change) => change.severity === "breaking" && !accepted.includes(change));
  const compatible = changes.filter((change) => change.severity === "compatible");
  for (const change of breaking) print(`BREAKING  ${change.where}  ${change.pointer}: ${change.message}`);
  for (const change of accepted) print(`accepted  ${change.where}  ${change.pointer}: ${change.message}; ${acceptanceOf(change, acceptedList)!.why}`);
  for (const change of compatible) print(`compatible  ${change.where}  ${change.pointer}: ${change.message}`);
  if (accepted.length) print(`${accepted.length} breaking change${accepted.length === 1 ? "" : "s"} accepted (${name(resolve(values.accepted ?? ACCEPTED_FILE))})`);
  print(`${breaking.length} breaking, ${compatible.length} compatible change${compatible.length === 1 ? "" : "s"}`);
  if (breaking.length === 0) return 0;
  if (to[0] > from[0]) {
    print(`Allowed: the major version went from ${from[0]} to ${to[0]}.`);
    return 0;
  }
  print(`Breaking changes need a new major version (info.version ${from[0] + 1}.0.0, served beside /api/v${from[0]}); otherwise make them additive. See README: Contract versioning.`);
  return 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  run(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: Error) => {
      console.error(`contract:diff: ${error.message}`);
      process.exitCode = 2;
    },
  );
}
