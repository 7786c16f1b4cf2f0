/**
 * Builds and packs the npm package @live-stream-hosting/sdk from sdk/ (npm run sdk:build,
 * npm run sdk:pack, and the packed-tarball test). The package directory is staged under build/:
 * sdk/package.json, sdk/README.md and sdk/CHANGELOG.md, plus dist/ compiled by sdk/tsconfig.build.json, in which
 * dist/generated/ holds the contract's types so the package needs nothing from this repository.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { loadContract } from "../contract/contract.ts";
import { checkEntry } from "./changelog.ts";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const DEFAULT_PACKAGE_DIR = join(ROOT, "build", "sdk");
export const DEFAULT_PACK_DESTINATION = join(ROOT, "build");
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");

interface Manifest {
  name: string;
  version: string;
  bin: Record<string, string>;
}

export function readManifest(): Manifest {
  return JSON.parse(readFileSync(join(ROOT, "sdk", "package.json"), "utf8")) as Manifest;
}

export async function contractVersion(): Promise<string> {
  return (await loadContract()).version;
}

/**
 * The package's version is the contract's: a partner reading either sees the same number. Its
 * changelog (shipped in the package) has an entry for it.
 */
export async function assertVersionMatchesContract(): Promise<string> {
  const { version } = readManifest();
  const expected = await contractVersion();
  if (version !== expected) {
    throw new Error(
      `sdk/package.json has version ${version} but openapi.yaml info.version is ${expected}: ` +
        `set "version": "${expected}" in sdk/package.json (the SDK is versioned with the contract).`,
    );
  }
  const problems = checkEntry(
    "sdk/CHANGELOG.md",
    readFileSync(join(ROOT, "sdk", "CHANGELOG.md"), "utf8"),
    version,
    false,
  );
  if (problems.length) throw new Error(problems.join("; "));
  return version;
}

export interface BuiltPackage {
  /** The staged package directory, ready for `npm pack`. */
  dir: string;
  name: string;
  version: string;
}

/** Compiles sdk/ into a fresh package directory (default build/sdk). */
export async function buildSdk({ dir = DEFAULT_PACKAGE_DIR }: { dir?: string } = {}): Promise<BuiltPackage> {
  const version = await assertVersionMatchesContract();
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const dist = join(dir, "dist");
  run(
    process.execPath,
    [TSC, "-p", join(ROOT, "sdk", "tsconfig.build.json"), "--outDir", dist],
    "compiling the SDK (tsc -p sdk/tsconfig.build.json)",
  );
  for (const file of walk(dist).filter((path) => path.endsWith(".d.ts"))) rewriteDeclarationImports(file);
  const manifest = readManifest();
  copyFileSync(join(ROOT, "sdk", "package.json"), join(dir, "package.json"));
  for (const file of ["README.md", "CHANGELOG.md"]) copyFileSync(join(ROOT, "sdk", file), join(dir, file));
  // npm pack sets every mtime to one date but keeps modes, which follow the umask: fixed modes
  // make two packs of the same sources byte-identical on any machine.
  for (const file of walk(dir)) chmodSync(file, 0o644);
  for (const bin of Object.values(manifest.bin)) chmodSync(join(dir, bin), 0o755);
  return { dir, name: manifest.name, version };
}

export interface PackedPackage {
  tarball: string;
  /** Bytes of the .tgz. */
  size: number;
  unpackedSize: number;
  files: string[];
}

/** `npm pack` of a built package directory into `destination` (default build/). */
export function packSdk(dir: string, destination = DEFAULT_PACK_DESTINATION): PackedPackage {
  mkdirSync(destination, { recursive: true });
  const output = run(
    "npm",
    ["pack", dir, "--pack-destination", destination, "--json", "--silent"],
    "packing the SDK (npm pack)",
  );
  const [packed] = JSON.parse(output.slice(output.indexOf("["))) as {
    filename: string;
    size: number;
    unpackedSize: number;
    files: { path: string }[];
  }[];
  if (!packed) throw new Error(`npm pack printed no package: ${output}`);
  return {
    tarball: join(destination, packed.filename),
    size: packed.size,
    unpackedSize: packed.unpackedSize,
    files: packed.files.map((file) => file.path).sort(),
  };
}

export function formatBytes(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} kB`;
}

export function relativeToRoot(path: string): string {
  return relative(ROOT, path) || ".";
}

// tsc's rewriteRelativeImportExtensions rewrites `./x.ts` to `./x.js` in JavaScript only; the
// declarations keep `.ts`, which TypeScript before 5.0 rejects in an import path.
function rewriteDeclarationImports(file: string): void {
  const text = readFileSync(file, "utf8");
  const rewritten = text.replace(/(from\s+|import\()(["'])(\.{1,2}\/[^"']+)\.ts\2/g, "$1$2$3.js$2");
  if (rewritten !== text) writeFileSync(file, rewritten);
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

function run(command: string, args: string[], what: string): string {
  const result = spawnSync(command, args, { cwd: ROOT, encoding: "utf8" });
  if (result.error) throw new Error(`${what} could not start: ${result.error.message}`);
  if (result.status !== 0) {
    throw new Error(`${what} failed (exit ${result.status}):\n${`${result.stdout}\n${result.stderr}`.trim()}`);
  }
  return result.stdout;
}
