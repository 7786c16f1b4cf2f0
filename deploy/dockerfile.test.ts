// The Dockerfile's own commands, run without a container runtime: each stage gets a scratch
// folder for the image's filesystem, COPY and WORKDIR act on it, RUN, CMD and HEALTHCHECK run
// there as a user who is not root, exactly as written. Container paths under the node user's
// home (where the image keeps the app and its data) are mapped into the stage's folder.
import {
  chmodSync,
  cpSync,
  existsSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../mock/prism.ts";
import {
  copyFiles,
  makeWritable,
  operatorEnv,
  repositoryFiles,
  ROOT,
  run,
  type RunAs,
  snapshot,
  start,
  untilReady,
} from "./checkout.ts";
import { dockerignore, envPairs, execForm, options, parseDockerfile, type Stage, stagesOf } from "./dockerfile.ts";

const HOME = "/home/node";
const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
const stages = stagesOf(parseDockerfile(dockerfile));
const ignored = dockerignore(readFileSync(join(ROOT, ".dockerignore"), "utf8"));
const final = stages.at(-1)!;
const args = (stage: Stage, keyword: string) =>
  stage.instructions.filter((instruction) => instruction.keyword === keyword).map((instruction) => instruction.args);

/** Root runs the commands as `nobody`; anyone else as themselves (already not root). */
function nonRootUser(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const nobody = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((line) => line.startsWith("nobody:"))
    ?.split(":");
  return { uid: Number(nobody?.[2] ?? 65534), gid: Number(nobody?.[3] ?? 65534) };
}
const user = nonRootUser();
console.log(
  `Dockerfile commands run as ${user ? `uid ${user.uid} (nobody), the test runs as root` : `uid ${process.getuid?.()}, the test's own user`}`,
);

function chownTree(path: string): void {
  if (!user) return;
  lchownSync(path, user.uid, user.gid);
  if (lstatSync(path).isDirectory()) for (const name of readdirSync(path)) chownTree(join(path, name));
}

/** What COPY without --chown gives the node user: files owned by root, readable, not writable. */
function readOnlyTree(path: string): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  chmodSync(path, stat.mode & ~0o222);
  if (stat.isDirectory()) for (const name of readdirSync(path)) readOnlyTree(join(path, name));
}

const scratch = mkdtempSync(join(tmpdir(), "dockerfile-"));
afterAll(() => {
  makeWritable(scratch);
  rmSync(scratch, { recursive: true, force: true });
});
chownTree(scratch);

/** The build context: the repository's files that .dockerignore lets through. */
const context = join(scratch, "context");
copyFiles(
  repositoryFiles((path) => !ignored(path)),
  ROOT,
  context,
);

interface StageState {
  root: string;
  cwd: string;
  env: Record<string, string>;
  users: string[];
}

/** A container path in the stage's folder; only paths under the node user's home are mapped. */
function inStage(state: Pick<StageState, "root" | "cwd">, path: string): string {
  const absolute = posix.isAbsolute(path) ? posix.normalize(path) : posix.join(state.cwd, path);
  if (absolute !== HOME && !absolute.startsWith(`${HOME}/`))
    throw new Error(`${path}: only paths under ${HOME} are mapped`);
  return join(state.root, absolute);
}

const built = new Map<string, StageState>();

async function runStage(stage: Stage, index: number): Promise<StageState> {
  const root = join(scratch, `stage-${index}`);
  const state: StageState = { root, cwd: HOME, env: operatorEnv(), users: [] };
  mkdirSync(join(root, HOME), { recursive: true });
  chownTree(root);
  state.env.HOME = join(root, HOME);
  for (const { keyword, args: text, line } of stage.instructions) {
    const where = `Dockerfile line ${line}: ${keyword} ${text}`;
    switch (keyword) {
      case "USER":
        state.users.push(text);
        break;
      case "WORKDIR":
        state.cwd = posix.isAbsolute(text) ? text : posix.join(state.cwd, text);
        mkdirSync(inStage(state, state.cwd), { recursive: true });
        chownTree(inStage(state, state.cwd));
        break;
      case "ENV":
        for (const [name, value] of envPairs(text))
          state.env[name] = value.startsWith(HOME) ? inStage(state, value) : value;
        break;
      case "COPY": {
        const { options: copy, rest } = options(text);
        const dest = rest.pop()!;
        const from = copy.from === undefined ? undefined : built.get(copy.from);
        if (copy.from !== undefined && !from) throw new Error(`${where}: no stage ${copy.from} before this one`);
        for (const source of rest) {
          const path = from ? inStage(from, source) : join(context, source);
          const target =
            lstatSync(path).isDirectory() || dest.endsWith("/") || dest === "."
              ? join(inStage(state, dest), lstatSync(path).isDirectory() ? "" : posix.basename(source))
              : inStage(state, dest);
          cpSync(path, target, { recursive: true, verbatimSymlinks: true });
          chownTree(target);
          if (copy.chown === undefined) readOnlyTree(target);
        }
        break;
      }
      case "RUN": {
        const finished = await run(execForm(text) ?? ["/bin/sh", "-c", text], {
          cwd: inStage(state, state.cwd),
          env: state.env,
          as: user,
        });
        expect(finished.code, `${where}\n${finished.output}`).toBe(0);
        expect(finished.output, where).not.toMatch(/EBADENGINE/);
        break;
      }
      case "EXPOSE":
      case "HEALTHCHECK":
      case "STOPSIGNAL":
      case "CMD":
        break;
      default:
        throw new Error(`${where}: not read by this test`);
    }
  }
  if (stage.name) built.set(stage.name, state);
  return state;
}

describe("the Dockerfile", () => {
  it("builds from node:24-slim in stages and runs as the node user, node itself as PID 1, stopped by SIGTERM", () => {
    expect(stages.map((stage) => stage.base)).toEqual(["node:24-slim", "node:24-slim"]);
    expect(stages.length).toBeGreaterThan(1);
    for (const stage of stages) expect(args(stage, "USER"), stage.base).toEqual(["node"]);
    // USER comes before any RUN: nothing runs as root.
    for (const stage of stages)
      expect(stage.instructions.findIndex((i) => i.keyword === "USER")).toBeLessThan(
        stage.instructions.findIndex((i) => i.keyword === "RUN"),
      );
    expect(args(final, "CMD").map(execForm)).toEqual([["node", "server/main.ts"]]);
    expect(args(final, "STOPSIGNAL")).toEqual(["SIGTERM"]);
    expect(args(final, "HEALTHCHECK")).toHaveLength(1);
    expect(args(final, "HEALTHCHECK")[0]).toMatch(/CMD \["node", "-e", ".*\/readyz/);
  });

  it("leaves out of the build context what a checkout makes and what only tests read", () => {
    for (const path of [
      ".git/HEAD",
      "node_modules/express/package.json",
      "build/contract/server.json",
      ".data/PG_VERSION",
      ".ci/node/bin/node",
      "server/tests/streams.test.ts",
      "testkit/harness.ts",
      "server/http/dispatch.test-d.ts",
      "server/store/keys.test.ts",
      "conformance/server.test.ts",
      "bench/run.ts",
      "dashboard/e2e/dashboard.spec.ts",
    ])
      expect(ignored(path), path).toBe(true);
    for (const path of ["package.json", "server/main.ts", "openapi.yaml", "docs/samples/createStream.ts"])
      expect(ignored(path), path).toBe(false);
  });

  it("its commands install, build and start the server as a non-root user: /readyz answers, HEALTHCHECK passes, SIGTERM stops it", async () => {
    let image: StageState | undefined;
    for (const [index, stage] of stages.entries()) image = await runStage(stage, index);
    const app = inStage(image!, image!.cwd);
    expect(
      ["tsx", "typescript", "@redocly/cli", "@stoplight/prism-cli", "vitest"].filter((name) =>
        existsSync(join(app, "node_modules", name)),
      ),
    ).toEqual([]);
    expect(existsSync(join(app, "build", "contract", "server.json"))).toBe(true);

    const port = String(await freePort());
    const env: Record<string, string> = { ...image!.env, PORT: port };
    const before = snapshot(app, []);
    const server = start(execForm(args(final, "CMD")[0]!)!, { cwd: app, env, as: user });
    const healthcheck = execForm(args(final, "HEALTHCHECK")[0]!.replace(/^.*?CMD\s+/, ""))!;
    try {
      const origin = await untilReady(server);
      expect(origin).toBe(`http://127.0.0.1:${port}`);
      expect((await fetch(`${origin}/api/v1/creators`)).status).toBe(200);
      const check = await run(healthcheck, { cwd: app, env, as: user });
      expect(check.code, check.output).toBe(0);
    } finally {
      server.process.kill(args(final, "STOPSIGNAL")[0] as NodeJS.Signals);
    }
    const [code] = await new Promise<[number | null]>((resolve) =>
      server.process.once("exit", (exit) => resolve([exit])),
    );
    expect(code, server.output()).toBe(0);
    expect(server.output()).toMatch(/SIGTERM: stopping[\s\S]*database: closed, \S+ unlocked[\s\S]*Stopped\./);
    // The embedded database went to DATA_DIR, outside the app, which the server never wrote.
    expect(readdirSync(env.DATA_DIR!)).toContain("PG_VERSION");
    expect(snapshot(app, [])).toEqual(before);
    expect((await run(healthcheck, { cwd: app, env, as: user })).code).toBe(1);
  }, 1_200_000);
});
