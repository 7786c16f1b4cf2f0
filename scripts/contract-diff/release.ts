/**
 * The release around the contract, as the gate checks it: the released contracts, the manifests'
 * versions, the changelog entries and the SDK tarball the guides name.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { rsort, valid } from "semver";
import { parseYamlText } from "../../contract/load.ts";
import { checkEntry } from "../changelog.ts";

type Versioned = { info?: { version?: unknown }; version?: unknown };
const read = (file: string) => parseYamlText(readFileSync(file, "utf8")) as Versioned;

/** Released versions, newest first; a file not named after its info.version is a problem. */
export function releases(root: string, problems: string[]): string[] {
  const dir = join(root, "contract", "released");
  const versions: string[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith(".yaml"))) {
    const version = file.slice(0, -".yaml".length);
    const inside = read(join(dir, file)).info?.version;
    if (valid(version) && inside === version) versions.push(version);
    else problems.push(`contract/released/${file} has info.version ${String(inside)}: name it after its version`);
  }
  if (!versions.length) throw new Error(`no released contract (<version>.yaml) in ${dir}`);
  return rsort(versions);
}

/** README.md, sdk/README.md and docs/*.md, where they exist: the guides that name the SDK's tarball. */
function guides(root: string): string[] {
  const docs = existsSync(join(root, "docs")) ? readdirSync(join(root, "docs")).map((file) => join("docs", file)) : [];
  return ["README.md", join("sdk", "README.md"), ...docs].filter(
    (file) => file.endsWith(".md") && existsSync(join(root, file)),
  );
}

/** What disagrees with `version` (openapi.yaml's info.version) in the rest of the release. */
export function releaseProblems(root: string, version: string): string[] {
  const problems: string[] = [];
  for (const manifest of ["package.json", join("sdk", "package.json")]) {
    const own = read(join(root, manifest)).version;
    if (own !== version) problems.push(`${manifest} has version ${String(own)}, not the contract's ${version}`);
  }
  const released = existsSync(join(root, "contract", "released", `${version}.yaml`));
  for (const changelog of ["CHANGELOG.md", join("sdk", "CHANGELOG.md")]) {
    const file = join(root, changelog);
    if (existsSync(file)) problems.push(...checkEntry(changelog, readFileSync(file, "utf8"), version, released));
    else problems.push(`${changelog} is missing`);
  }
  const tarball = `live-stream-hosting-sdk-${version}.tgz`;
  for (const guide of guides(root)) {
    const text = readFileSync(join(root, guide), "utf8");
    for (const [named] of text.matchAll(/live-stream-hosting-sdk-\d+\.\d+\.\d+\.tgz/g)) {
      if (named !== tarball) problems.push(`${guide} names ${named}: this release packs ${tarball}`);
    }
  }
  return problems;
}
