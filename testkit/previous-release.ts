// The released version this checkout must roll with, checked out from git into a worktree of its
// own and built there, for the release-to-release test (server/tests/release-to-release.test.ts).
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import semver from "semver";
import { currentVersion, type Release, releaseCommit, releasedVersions } from "../scripts/migration-lint.ts";
import { ROOT } from "./server-process.ts";

/**
 * The release a rolling upgrade from, or a rollback to, must work with: the newest version in
 * contract/released/ at or below package.json's. Below it, that release is the one before this
 * code; equal to it, this code is that release or a patch on it, and rolls with the commit that
 * froze it, unless its server is that commit's: then it is the release itself, rolled with the
 * release before. Found as lint:migrations finds releases (the tag `v<version>`, else the commit
 * that added contract/released/<version>.yaml); throws MigrationLintError without git history.
 */
export function rollingPartner(root = ROOT): Release {
  const current = currentVersion(root);
  for (const version of releasedVersions(root).filter((version) => semver.lte(version, current))) {
    const release = releaseCommit(root, version);
    // This checkout being that release itself (its server unchanged), the upgrade it is the end of
    // starts at the release before.
    if (version !== current || serverChangesSince(release.commit, root).length > 0) return release;
  }
  throw new Error(`no release at or below ${current} in contract/released/ whose server differs from this checkout`);
}

/** The server's source files (tests left out) that differ between `commit` and this checkout. */
export function serverChangesSince(commit: string, root = ROOT): string[] {
  return execFileSync("git", ["diff", "--name-only", commit, "--", "server", ":!*.test.ts", ":!server/tests"], {
    cwd: root,
    encoding: "utf8",
  })
    .split("\n")
    .filter(Boolean);
}

export interface BuiltRelease extends Release {
  /** The worktree, built: `node server/main.ts` runs there. */
  dir: string;
  /** How it got its node_modules. */
  dependencies: string;
  /** Checkout, dependencies and build, in milliseconds. */
  buildMs: number;
  /** Removes the worktree (and its registration in the repository). */
  remove(): Promise<void>;
}

/** Runs a command to its end; rejects with the end of its output when it fails. */
function run(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${command} ${args.join(" ")} in ${cwd} exited ${code}:\n${output.slice(-4_000)}`)),
    );
  });
}

/**
 * `git worktree add --detach` of the release's commit in a temporary directory, its dependencies,
 * and `npm run build` there. Dependencies: when the release's package-lock.json locks the same packages as this
 * checkout's, a symbolic link to this checkout's node_modules (the same packages, nothing
 * fetched); otherwise `npm ci` there (from the npm registry; its `prepare` runs the build).
 */
export async function buildRelease(release: Release, root = ROOT): Promise<BuiltRelease> {
  const began = Date.now();
  const parent = mkdtempSync(join(tmpdir(), `lsh-release-${release.version}-`));
  const dir = join(parent, "checkout");
  const linked = join(dir, "node_modules");
  let isLinked = false;
  const remove = async () => {
    if (isLinked) unlinkSync(linked);
    isLinked = false;
    await run("git", ["worktree", "remove", "--force", dir], root).catch(() => undefined);
    rmSync(parent, { recursive: true, force: true });
    await run("git", ["worktree", "prune"], root).catch(() => undefined);
  };
  try {
    await run("git", ["worktree", "add", "--detach", dir, release.commit], root);
    const sameLock =
      lockedDependencies(join(dir, "package-lock.json")) === lockedDependencies(join(root, "package-lock.json"));
    let dependencies: string;
    if (sameLock) {
      symlinkSync(realpathSync(join(root, "node_modules")), linked, "dir");
      isLinked = true;
      await run("npm", ["run", "build"], dir);
      dependencies = "node_modules linked (package-lock.json locks the same packages as the release's)";
    } else {
      await run("npm", ["ci", "--no-audit", "--no-fund"], dir);
      dependencies = "npm ci (package-lock.json locks other packages than the release's)";
    }
    return { ...release, dir, dependencies, buildMs: Date.now() - began, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}

/** The packages a package-lock.json installs, without the project's own entry (whose version each release bumps). */
function lockedDependencies(file: string): string {
  const { packages = {} } = JSON.parse(readFileSync(file, "utf8")) as { packages?: Record<string, unknown> };
  const { "": _project, ...installed } = packages;
  return JSON.stringify(installed);
}
