/**
 * `npm run bench -- --startup`: how long each process takes from its start to answering as
 * ready, and how much memory it holds then. The server and the mock are started with the command
 * their package.json script runs (read from package.json, not restated; npm itself is left out,
 * as in a container that runs `node` directly), Prism with its own CLI as its documentation
 * starts it. Each target gets one unmeasured start (so the operating system's file cache and
 * Node's compile cache are as on any restart), then `runs` measured ones.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort, terminate } from "../../mock/prism.ts";
import { scratchPostgresDatabase } from "../../testkit/harness.ts";
import { ROOT } from "./children.ts";

const MIB = 1024 * 1024;
/** How long after ready the memory is read again: work a start left running (compilers, GC) settles. */
const SETTLE_MS = 2_000;
const POLL_MS = 10;
const TIMEOUT_MS = 60_000;
const TICKS_PER_SECOND = 100;
/** Any well-formed test key: the mock and Prism accept it. */
const TEST_KEY = `svc_test_${"0".repeat(32)}`;

export interface StartupSample {
  /** From spawning the process to its first ready answer. */
  readyMs: number;
  /** CPU time (user + system, every thread) the process tree spent until then. */
  cpuMs: number;
  /** Resident memory of the process tree when ready, and SETTLE_MS later. */
  rssMiB: number;
  settledRssMiB: number;
  /** The sum of each process's highest resident memory so far (VmHWM). */
  peakMiB: number;
}

export interface StartupRow {
  id: string;
  label: string;
  /** The checkout started: this one, or the one `--compare` names. */
  checkout: string;
  command: string;
  samples: StartupSample[];
  median: StartupSample;
}

export interface StartupTarget {
  id: string;
  label: string;
  /** The checkout whose commands are run (its directory is their working directory). */
  root: string;
  checkout: string;
  /** What a reader runs to get the same: the script's command, or Prism's. */
  command: string;
  /** Made once per start: the environment, the argv and what to remove afterwards. */
  launch(port: number): Promise<{ argv: string[]; env: NodeJS.ProcessEnv; cleanup?: () => Promise<void> }>;
  /** The request whose 200 means ready. */
  ready: { path: string; headers?: Record<string, string> };
  /** The goals of issue 24 for this target. */
  goals: { readyMs: number; rssMiB?: number };
}

/** `exec node a b` from `root`'s package.json `script`, with this process's Node (the version being measured). */
export function scriptCommand(script: string, root: string = ROOT): string[] {
  const scripts = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> })
    .scripts;
  const text = scripts[script];
  const words = text?.replace(/^exec\s+/, "").split(/\s+/) ?? [];
  if (words[0] !== "node" || words.some((word) => /[;&|<>$`"'=]/.test(word))) {
    throw new Error(
      `package.json's "${script}" script (${text}) is not a plain \`node …\` command; the start-up benchmark cannot run it without npm`,
    );
  }
  return [process.execPath, ...words.slice(1)];
}

/**
 * The targets of the checkout in `root`: the server on each engine (PostgreSQL only with
 * `postgresUrl`), the mock, and Prism alone.
 */
export function startupTargets(
  postgresUrl: string | undefined,
  { root = ROOT, checkout = "this checkout" }: { root?: string; checkout?: string } = {},
): StartupTarget[] {
  root = resolve(root);
  const server = scriptCommand("start", root);
  const mock = scriptCommand("mock", root);
  const at = { root, checkout };
  const serverCommand = `npm start (${server.slice(1).join(" ")})`;
  const base = { PUBLIC_BASE_URL: undefined, ADMIN_TOKEN: undefined, LOG_LEVEL: "info" };
  const dataDirs: string[] = [];
  const newDataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "lsh-startup-"));
    dataDirs.push(dir);
    return dir;
  };
  const kept = newDataDir();
  const targets: StartupTarget[] = [
    {
      ...at,
      id: "server-pglite-existing",
      label: "server, embedded database (restart)",
      command: serverCommand,
      launch: async (port) => ({
        argv: server,
        env: { ...base, PORT: String(port), DATABASE_URL: "", DATA_DIR: kept },
      }),
      ready: { path: "/readyz" },
      goals: { readyMs: 3_000, rssMiB: 300 },
    },
    {
      ...at,
      id: "server-pglite-new",
      label: "server, embedded database (first start: new data directory)",
      command: serverCommand,
      launch: async (port) => {
        const dir = newDataDir();
        return {
          argv: server,
          env: { ...base, PORT: String(port), DATABASE_URL: "", DATA_DIR: dir },
          cleanup: async () => rmSync(dir, { recursive: true, force: true }),
        };
      },
      ready: { path: "/readyz" },
      goals: { readyMs: 3_000, rssMiB: 300 },
    },
  ];
  if (postgresUrl) {
    let scratch: Promise<{ url: string; drop(): Promise<void> }> | undefined;
    targets.unshift({
      ...at,
      id: "server-postgres",
      label: "server, PostgreSQL (restart: database migrated)",
      command: serverCommand,
      launch: async (port) => {
        scratch ??= scratchPostgresDatabase(postgresUrl, "lsh_startup");
        return { argv: server, env: { ...base, PORT: String(port), DATABASE_URL: (await scratch).url } };
      },
      ready: { path: "/readyz" },
      goals: { readyMs: 1_500, rssMiB: 150 },
    });
    cleanups.push(async () => (scratch ? (await scratch).drop() : undefined));
  }
  cleanups.push(async () => {
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });
  const auth = { authorization: `Bearer ${TEST_KEY}` };
  targets.push(
    {
      ...at,
      id: "mock",
      label: "static mock (npm run mock: Prism behind the contract edge)",
      command: `npm run mock (${mock.slice(1).join(" ")})`,
      launch: async (port) => ({ argv: mock, env: { MOCK_PORT: String(port) } }),
      ready: { path: "/api/v1/streams", headers: auth },
      goals: { readyMs: 3_000 },
    },
    {
      ...at,
      id: "mock-dynamic",
      label: "dynamic mock (npm run mock -- --dynamic: the server in memory; ready = a new key's first list)",
      command: `npm run mock -- --dynamic (${mock.slice(1).join(" ")} --dynamic)`,
      launch: async (port) => ({ argv: [...mock, "--dynamic"], env: { MOCK_PORT: String(port) } }),
      ready: { path: "/api/v1/streams", headers: auth },
      goals: { readyMs: 3_000 },
    },
    {
      ...at,
      id: "prism",
      label: "Prism alone (prism mock openapi.yaml)",
      command: "node_modules/.bin/prism mock openapi.yaml",
      launch: async (port) => ({
        argv: [
          process.execPath,
          join(root, "node_modules", ".bin", "prism"),
          "mock",
          "openapi.yaml",
          "-h",
          "127.0.0.1",
          "-p",
          String(port),
        ],
        env: {},
      }),
      ready: { path: "/streams", headers: auth },
      goals: { readyMs: Number.POSITIVE_INFINITY },
    },
  );
  return targets;
}

const cleanups: Array<() => Promise<void>> = [];

/** Removes the data directories and the scratch database the targets made. */
export async function cleanUpStartupTargets(): Promise<void> {
  for (const cleanup of cleanups.splice(0)) await cleanup();
}

/** A process and its descendants, as /proc lists them. */
function processTree(pid: number): number[] {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    // Gone, or no /proc: counted as nothing.
  }
  return [pid, ...children.flatMap(processTree)];
}

function treeFigures(pid: number): { rss: number; peak: number; cpuMs: number } {
  let rss = 0;
  let peak = 0;
  let cpuMs = 0;
  for (const member of processTree(pid)) {
    try {
      const status = readFileSync(`/proc/${member}/status`, "utf8");
      rss += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
      peak += Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
      // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${member}/stat`, "utf8").split(") ")[1]!.split(" ");
      cpuMs += ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
    } catch {
      // The process ended between listing and reading.
    }
  }
  return { rss: rss / MIB, peak: peak / MIB, cpuMs };
}

async function answersReady(url: string, headers: Record<string, string> | undefined): Promise<boolean> {
  try {
    const response = await fetch(url, { headers: headers ?? {}, signal: AbortSignal.timeout(2_000) });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}

async function startOnce(target: StartupTarget): Promise<StartupSample> {
  const port = await freePort();
  const { argv, env, cleanup } = await target.launch(port);
  mkdirSync(join(ROOT, ".bench", "logs"), { recursive: true });
  const logFile = join(ROOT, ".bench", "logs", `startup-${target.id}-${Date.now()}-${port}.log`);
  const fd = openSync(logFile, "a");
  const startedAt = performance.now();
  const child: ChildProcess = spawn(argv[0]!, argv.slice(1), {
    cwd: target.root,
    env: { ...process.env, ...env },
    stdio: ["ignore", fd, fd],
  });
  closeSync(fd);
  try {
    const url = `http://127.0.0.1:${port}${target.ready.path}`;
    while (!(await answersReady(url, target.ready.headers))) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(
          `${target.label} exited (${child.exitCode ?? child.signalCode}) before it was ready; see ${logFile}`,
        );
      if (performance.now() - startedAt > TIMEOUT_MS)
        throw new Error(`${target.label} was not ready within ${TIMEOUT_MS} ms; see ${logFile}`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const readyMs = performance.now() - startedAt;
    const atReady = treeFigures(child.pid!);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const settled = treeFigures(child.pid!);
    return { readyMs, cpuMs: atReady.cpuMs, rssMiB: atReady.rss, settledRssMiB: settled.rss, peakMiB: settled.peak };
  } finally {
    await terminate(child);
    await cleanup?.();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * One unmeasured start, then `runs` measured ones, target after target. Targets of the same id
 * from two checkouts (`--compare`) take their starts in turn, so that a change in the machine's
 * load weighs on both alike.
 */
export async function measureStartup(
  targets: StartupTarget[],
  runs: number,
  log: (line: string) => void = console.log,
): Promise<StartupRow[]> {
  const ids = [...new Set(targets.map((target) => target.id))];
  const rows: StartupRow[] = [];
  for (const id of ids) {
    const group = targets.filter((target) => target.id === id);
    for (const target of group) await startOnce(target);
    const samples = new Map<StartupTarget, StartupSample[]>(group.map((target) => [target, []]));
    for (let run = 0; run < runs; run++) {
      for (const target of group) {
        const sample = await startOnce(target);
        samples.get(target)!.push(sample);
        const where = group.length > 1 ? ` [${target.checkout}]` : "";
        log(
          `  ${target.label}${where}: ready in ${sample.readyMs.toFixed(0)} ms (CPU ${sample.cpuMs.toFixed(0)} ms), RSS ${sample.rssMiB.toFixed(0)} MiB, ${sample.settledRssMiB.toFixed(0)} MiB ${SETTLE_MS / 1000} s later, peak ${sample.peakMiB.toFixed(0)} MiB`,
        );
      }
    }
    for (const target of group) {
      const taken = samples.get(target)!;
      const pick = (key: keyof StartupSample) => median(taken.map((sample) => sample[key]));
      rows.push({
        id,
        label: target.label,
        checkout: target.checkout,
        command: target.command,
        samples: taken,
        median: {
          readyMs: pick("readyMs"),
          cpuMs: pick("cpuMs"),
          rssMiB: pick("rssMiB"),
          settledRssMiB: pick("settledRssMiB"),
          peakMiB: pick("peakMiB"),
        },
      });
    }
  }
  return rows;
}

export interface StartupCheck {
  goal: string;
  row: string;
  value: string;
  met: boolean;
}

/** Issue 24's goals, judged on the medians of this checkout; resident memory is the larger of the two readings. */
export function checkStartup(rows: StartupRow[], targets: StartupTarget[]): StartupCheck[] {
  const checks: StartupCheck[] = [];
  for (const row of rows.filter((candidate) => candidate.checkout === targets[0]?.checkout)) {
    const { goals } = targets.find((target) => target.id === row.id && target.checkout === row.checkout)!;
    if (Number.isFinite(goals.readyMs))
      checks.push({
        goal: `ready ≤ ${goals.readyMs / 1000} s`,
        row: row.label,
        value: `${(row.median.readyMs / 1000).toFixed(2)} s`,
        met: row.median.readyMs <= goals.readyMs,
      });
    if (goals.rssMiB !== undefined) {
      const rss = Math.max(row.median.rssMiB, row.median.settledRssMiB);
      checks.push({
        goal: `RSS after start ≤ ${goals.rssMiB} MiB`,
        row: row.label,
        value: `${rss.toFixed(0)} MiB`,
        met: rss <= goals.rssMiB,
      });
    }
  }
  return checks;
}

export function startupTable(rows: StartupRow[]): string {
  const compared = new Set(rows.map((row) => row.checkout)).size > 1;
  const header = [
    "target",
    ...(compared ? ["checkout"] : []),
    "runs",
    "ready (median)",
    "ready (min–max)",
    "CPU to ready",
    "RSS at ready",
    `RSS ${SETTLE_MS / 1000} s later`,
    "peak RSS",
  ];
  const lines = rows.map((row) => {
    const ready = row.samples.map((sample) => sample.readyMs);
    const { median: m } = row;
    return [
      row.label,
      ...(compared ? [row.checkout] : []),
      String(row.samples.length),
      `${m.readyMs.toFixed(0)} ms`,
      `${Math.min(...ready).toFixed(0)}–${Math.max(...ready).toFixed(0)} ms`,
      `${m.cpuMs.toFixed(0)} ms`,
      `${m.rssMiB.toFixed(0)} MiB`,
      `${m.settledRssMiB.toFixed(0)} MiB`,
      `${m.peakMiB.toFixed(0)} MiB`,
    ];
  });
  return [header, header.map(() => "---"), ...lines].map((cells) => `| ${cells.join(" | ")} |`).join("\n");
}
