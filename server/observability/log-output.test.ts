import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, openSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const LOGGER = fileURLToPath(new URL("./logger.ts", import.meta.url));

interface LoggingChild {
  child: ChildProcess;
  /** The first JSON line the child reported on stderr. */
  report: () => Promise<Record<string, number>>;
  /** Everything else the child wrote on stderr. */
  stderrLines: () => string[];
  /** Starts reading the child's stdout; until then the reader is stalled. */
  startReading: () => void;
  /** The stdout lines read so far. */
  lines: () => string[];
  /** Resolves once `predicate` holds for the lines read, or rejects after `ms`. */
  linesUntil: (predicate: (lines: string[]) => boolean, ms: number) => Promise<string[]>;
  /** Ends the child's stdin, which the script may wait for (`released`). */
  release: () => void;
  exited: Promise<number | null>;
}

/**
 * Runs `script` in a process of its own, its stdout read by this test only when it chooses (a log
 * reader that stalls), with `createLogger`, `flushLogs` and `report` (a JSON line on stderr) in
 * scope, and `released`, which resolves when the test ends the child's stdin. Node gives a child
 * a socket pair for its stdout; `throughPipe` puts a real pipe (to `cat`) in between, and
 * `stdoutFd` gives it a file of the test's choosing.
 */
function spawnLogging(
  script: string,
  { throughPipe = false, stdoutFd }: { throughPipe?: boolean; stdoutFd?: number } = {},
): LoggingChild {
  const source = [
    `import { createLogger, droppedLogLines, flushLogs } from ${JSON.stringify(LOGGER)};`,
    `import { writeSync } from "node:fs";`,
    `const report = (value) => writeSync(2, JSON.stringify(value) + "\\n");`,
    `const released = new Promise((resolve) => { process.stdin.on("end", resolve); process.stdin.resume(); });`,
    script,
  ].join("\n");
  const node = [process.execPath, "--import", "tsx", "--input-type=module", "-e", source];
  const [command, ...args] = throughPipe ? ["sh", "-c", '"$0" "$@" | cat', ...node] : node;
  const child = spawn(command!, args, { stdio: ["pipe", stdoutFd ?? "pipe", "pipe"] });
  const exited = once(child, "exit").then(([code]) => code as number | null);
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const stderrLines = () => stderr.split("\n").filter((line) => line !== "");
  const report = async () => {
    for (;;) {
      const reported = stderrLines().find((line) => line.startsWith("{"));
      if (reported) return JSON.parse(reported) as Record<string, number>;
      await Promise.race([
        once(child.stderr!, "data"),
        exited.then(() => Promise.reject(new Error(`exited before reporting: ${stderr}`))),
      ]);
    }
  };
  let text = "";
  const lines = () => text.split("\n").slice(0, -1);
  const linesUntil = async (predicate: (lines: string[]) => boolean, ms: number) => {
    const deadline = Date.now() + ms;
    while (!predicate(lines())) {
      if (Date.now() > deadline)
        throw new Error(`after ${ms} ms, ${lines().length} lines read, the last: ${lines().at(-1)?.slice(0, 200)}`);
      await sleep(10);
    }
    return lines();
  };
  const startReading = () => child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
  return {
    child,
    report,
    stderrLines: () => stderrLines().filter((line) => !line.startsWith("{")),
    startReading,
    lines,
    linesUntil,
    release: () => child.stdin!.end(),
    exited,
  };
}

const parsed = (lines: string[]) =>
  lines.map((line) => JSON.parse(line) as { i?: number; msg: string; dropped?: number; level?: string });
const ascending = (length: number) => Array.from({ length }, (_, i) => i);

/** 20,000 lines of about 250 bytes: 5 MB, many times what a pipe holds. */
const LINES = 20_000;

describe("log lines on stdout, as the server writes them", () => {
  it("keeps the event loop turning while the reader stalls, and catches up with it as soon as it reads", async () => {
    const run = spawnLogging(`
      const logger = createLogger();
      let last = performance.now(), longestGap = 0;
      const ticking = setInterval(() => { const now = performance.now(); longestGap = Math.max(longestGap, now - last); last = now; }, 5);
      for (let i = 0; i < ${LINES}; i++) {
        logger.info({ i, filler: "x".repeat(150) }, "line");
        if (i % 500 === 499) await new Promise((resolve) => setTimeout(resolve, 1));
      }
      clearInterval(ticking);
      report({ longestGap });
      await released;
    `);
    // Nothing is read until the child has logged everything: its writes met a full pipe.
    const { longestGap } = await run.report();
    expect(longestGap).toBeLessThan(250);
    // The child is still running: the lines come from its retries, not from its exit flush.
    run.startReading();
    const lines = parsed(await run.linesUntil((lines) => lines.length >= LINES, 15_000));
    run.release();
    expect(await run.exited).toBe(0);
    expect(lines.map((line) => line.i)).toEqual(ascending(LINES));
  }, 30_000);

  it("holds at most 16 MB for a stalled reader, then drops lines and says how many once it has caught up", async () => {
    const many = 100_000;
    const run = spawnLogging(`
      const logger = createLogger();
      for (let i = 0; i < ${many}; i++) {
        logger.info({ i, filler: "x".repeat(150) }, "line");
        if (i % 1000 === 999) await new Promise((resolve) => setTimeout(resolve, 1));
      }
      report({ rss: process.memoryUsage().rss });
      await released;
      writeSync(2, "counted " + droppedLogLines() + "\\n");
    `);
    await run.report();
    run.startReading();
    const lines = parsed(await run.linesUntil((lines) => lines.at(-1)?.includes("dropped") ?? false, 60_000));
    run.release();
    expect(await run.exited).toBe(0);
    const notice = lines.at(-1)!;
    expect(notice).toMatchObject({
      level: "warn",
      msg: expect.stringMatching(/^\d+ log line\(s\) dropped: the reader of stdout fell 16 MB behind$/),
    });
    const delivered = lines.slice(0, -1).map((line) => line.i);
    // 16 MB held (plus what the pipe took): far from the 25 MB written; no line cut or out of order.
    expect(delivered.length).toBeLessThan(many * 0.8);
    expect(delivered).toEqual(ascending(delivered.length));
    expect(notice.dropped).toBe(many - delivered.length);
    // The count the metric log_lines_dropped_total reads.
    expect(run.stderrLines()).toEqual([`counted ${notice.dropped}`]);
  }, 90_000);

  it("never cuts a line with what console.log writes to the same stdout pipe meanwhile", async () => {
    const run = spawnLogging(
      `
      const logger = createLogger();
      for (let i = 0; i < ${LINES}; i++) {
        logger.info({ i, filler: "y".repeat(300) }, "line");
        if (i % 100 === 0) console.log("a console line " + i);
      }
      report({ logged: ${LINES} });
      await released;
    `,
      { throughPipe: true },
    );
    await run.report();
    run.startReading();
    const lines = await run.linesUntil((lines) => lines.filter((line) => line.startsWith("{")).length >= LINES, 15_000);
    run.release();
    expect(await run.exited).toBe(0);
    const cut = lines.filter((line) => !/^a console line \d+$/.test(line) && !/^\{.*\}$/.test(line));
    expect(cut).toEqual([]);
    expect(parsed(lines.filter((line) => line.startsWith("{"))).map((line) => line.i)).toEqual(ascending(LINES));
  }, 30_000);

  it("writes the last lines on a graceful stop (flush, then exit) and on a bare exit", async () => {
    for (const stop of ["await flushLogs(logger); process.exit(0);", "process.exit(0);"]) {
      const run = spawnLogging(`
        const logger = createLogger();
        for (let i = 0; i < 10; i++) logger.info({ i }, "line");
        ${stop}
      `);
      run.startReading();
      run.release();
      expect(await run.exited).toBe(0);
      expect(
        parsed(run.lines()).map((line) => line.i),
        stop,
      ).toEqual(ascending(10));
    }
  });

  it("exits promptly and says so on stderr when the reader has gone", async () => {
    const run = spawnLogging(`
      const logger = createLogger();
      for (let i = 0; i < ${LINES}; i++) logger.info({ i, filler: "x".repeat(150) }, "line");
      const exiting = Date.now();
      process.on("exit", () => report({ exitFlushMs: Date.now() - exiting }));
    `);
    run.child.stdout!.destroy();
    run.release();
    const { exitFlushMs } = await run.report();
    expect(exitFlushMs).toBeLessThan(500);
    expect(await run.exited).toBe(0);
    // pino's destination makes the output a sink once the reader is gone: nothing more to say at exit.
    expect(run.stderrLines()).toEqual(["log output: EPIPE; log lines may be lost"]);
  });

  it("gives a reader that never reads one second in all at shutdown, flush and exit together", async () => {
    const run = spawnLogging(`
      const logger = createLogger();
      for (let i = 0; i < ${LINES}; i++) logger.info({ i, filler: "x".repeat(150) }, "line");
      const stopping = Date.now();
      await flushLogs(logger);
      const flushMs = Date.now() - stopping;
      process.on("exit", () => report({ flushMs, totalMs: Date.now() - stopping }));
      process.exit(0);
    `);
    run.release();
    // The report comes after the exit flush; the stdout is never read.
    const { flushMs, totalMs } = await run.report();
    expect(flushMs).toBeGreaterThanOrEqual(900);
    expect(totalMs! - flushMs!).toBeLessThan(500);
    expect(await run.exited).toBe(0);
    // Given up by flushLogs, or by the exit flush if the retry had not come round yet.
    expect(run.stderrLines()).toContainEqual(
      expect.stringMatching(/^log output: (EAGAIN|the last write failed); the last log lines were not written$/),
    );
  });

  it("goes on when a full disk refuses the lines, and says so on stderr", async () => {
    const full = openSync("/dev/full", "w");
    const run = spawnLogging(
      `
      const logger = createLogger();
      for (let i = 0; i < 2000; i++) {
        logger.info({ i, filler: "x".repeat(150) }, "line");
        if (i % 100 === 99) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      report({ logged: 2000 });
    `,
      { stdoutFd: full },
    );
    closeSync(full);
    run.release();
    await run.report();
    expect(await run.exited).toBe(0);
    expect(run.stderrLines()).toEqual([
      "log output: ENOSPC; log lines may be lost",
      "log output: the last write failed; the last log lines were not written",
    ]);
  });
});
