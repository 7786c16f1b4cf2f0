import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, openSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { LineOutput } from "./log-output.ts";

const LOGGER = fileURLToPath(new URL("./logger.ts", import.meta.url));
const OUTPUT = fileURLToPath(new URL("./log-output.ts", import.meta.url));

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
 * reader that stalls), with `createLogger`, `LineOutput` and `report` (a JSON line on stderr) in
 * scope, and `released`, which resolves when the test ends the child's stdin. Node gives a child
 * a socket pair for its stdout; `throughPipe` puts a real pipe (to `cat`) in between, and
 * `stdoutFd` gives it a file of the test's choosing.
 */
function spawnLogging(script: string, { throughPipe = false, stdoutFd }: { throughPipe?: boolean; stdoutFd?: number } = {}): LoggingChild {
  const source = [
    `import { createLogger } from ${JSON.stringify(LOGGER)};`,
    `import { LineOutput } from ${JSON.stringify(OUTPUT)};`,
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
      await Promise.race([once(child.stderr!, "data"), exited.then(() => Promise.reject(new Error(`exited before reporting: ${stderr}`)))]);
    }
  };
  let text = "";
  const lines = () => text.split("\n").slice(0, -1);
  const linesUntil = async (predicate: (lines: string[]) => boolean, ms: number) => {
    const deadline = Date.now() + ms;
    while (!predicate(lines())) {
      if (Date.now() > deadline) throw new Error(`after ${ms} ms, ${lines().length} lines read, the last: ${lines().at(-1)?.slice(0, 200)}`);
      await sleep(10);
    }
    return lines();
  };
  const startReading = () => child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
  return { child, report, stderrLines: () => stderrLines().filter((line) => !line.startsWith("{")), startReading, lines, linesUntil, release: () => child.stdin!.end(), exited };
}

const parsed = (lines: string[]) => lines.map((line) => JSON.parse(line) as { i?: number; msg: string; dropped?: number; reason?: string });
const ascending = (length: number) => Array.from({ length }, (_, i) => i);

/** 20,000 lines of about 250 bytes: 5 MB, many times what a pipe holds. */
const LINES = 20_000;

describe("log lines on stdout", () => {
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
    const lines = parsed(await run.linesUntil((lines) => lines.length >= LINES, 5_000));
    run.release();
    expect(await run.exited).toBe(0);
    expect(lines.map((line) => line.i)).toEqual(ascending(LINES));
  });

  it("holds at most its bound for a stalled reader, then drops lines and says how many once the reader has caught up", async () => {
    const run = spawnLogging(`
      void process.stdout;
      const output = new LineOutput({ fd: 1, maxWaitingBytes: 200_000 });
      for (let i = 0; i < ${LINES}; i++) output.write(JSON.stringify({ i, msg: "line", filler: "x".repeat(200) }) + "\\n");
      report({ written: ${LINES} });
      await released;
    `);
    await run.report();
    run.startReading();
    const lines = parsed(await run.linesUntil((lines) => lines.at(-1)?.includes("log lines dropped") ?? false, 5_000));
    run.release();
    expect(await run.exited).toBe(0);
    const notice = lines.at(-1)!;
    expect(notice).toMatchObject({ level: "warn", msg: "log lines dropped", reason: "stdout did not take them", hostname: expect.any(String) });
    const delivered = lines.slice(0, -1).map((line) => line.i);
    // 200 KB held, plus what the pipe and this reader's stream buffer took (about 250 KB here):
    // far from the 4.5 MB written, and no line cut or out of order.
    expect(delivered.length).toBeLessThan(LINES / 4);
    expect(delivered).toEqual(ascending(delivered.length));
    expect(notice.dropped).toBe(LINES - delivered.length);
  });

  it("never cuts a line with what console.log writes to the same stdout pipe meanwhile", async () => {
    const run = spawnLogging(`
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
    const lines = await run.linesUntil((lines) => lines.filter((line) => line.startsWith("{")).length >= LINES, 5_000);
    run.release();
    expect(await run.exited).toBe(0);
    const cut = lines.filter((line) => !/^a console line \d+$/.test(line) && !/^\{.*\}$/.test(line));
    expect(cut).toEqual([]);
    expect(parsed(lines.filter((line) => line.startsWith("{"))).map((line) => line.i)).toEqual(ascending(LINES));
  });

  it("waits at exit for a reader that is slow to start, as long as it reads", async () => {
    const many = 2 * LINES;
    const run = spawnLogging(`
      const logger = createLogger();
      for (let i = 0; i < ${many}; i++) {
        logger.info({ i, filler: "x".repeat(150) }, "line");
        if (i % 500 === 499) await new Promise((resolve) => setTimeout(resolve, 1));
      }
      report({ logged: ${many} });
      await released;
    `);
    await run.report();
    // 10 MB wait in the child (under its 16 MB bound), which exits now; its reader comes 300 ms later.
    run.release();
    await sleep(300);
    run.startReading();
    expect(await run.exited).toBe(0);
    const lines = await run.linesUntil((lines) => lines.length >= many, 5_000);
    expect(parsed(lines).map((line) => line.i)).toEqual(ascending(many));
  });

  it("exits promptly and says so once on stderr when the reader has gone", async () => {
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
    expect(run.stderrLines()).toEqual(["Stdout is closed (EPIPE): log lines are discarded from now on."]);
  });

  it("waits a second in all at shutdown for a reader that never reads, flush and exit together", async () => {
    const run = spawnLogging(`
      const logger = createLogger();
      for (let i = 0; i < ${LINES}; i++) logger.info({ i, filler: "x".repeat(150) }, "line");
      const stopping = Date.now();
      logger.flush(() => {
        const flushMs = Date.now() - stopping;
        process.on("exit", () => report({ flushMs, totalMs: Date.now() - stopping }));
        process.exit(0);
      });
    `);
    run.release();
    // The report comes after the exit flush; the stdout is never read.
    const { flushMs, totalMs } = await run.report();
    expect(flushMs).toBeGreaterThanOrEqual(900);
    expect(totalMs! - flushMs!).toBeLessThan(500);
    expect(await run.exited).toBe(0);
  });

  it("drops and counts lines a full disk refuses, says it once on stderr, and goes on", async () => {
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
      "Log lines could not be written to stdout (ENOSPC); they are dropped and counted until a write succeeds.",
      expect.stringMatching(/^Exiting with \d+ log line\(s\) not written to stdout\.$/),
    ]);
  });
});

describe("a LineOutput whose writes fail", () => {
  const failure = (code: string) => Object.assign(new Error(code), { code });

  /** A LineOutput on a fake descriptor: `fails(call)` says whether the nth write throws; what the others wrote is `text()`. */
  function failingOutput(fails: (call: number) => Error | undefined): { output: LineOutput; text: () => string } {
    const written: Buffer[] = [];
    let calls = 0;
    const output = new LineOutput({
      fd: -1,
      writeSync: (_fd, bytes, offset, length) => {
        const error = fails(++calls);
        if (error) throw error;
        written.push(Buffer.from(bytes.subarray(offset, offset + length)));
        return length;
      },
    });
    return { output, text: () => Buffer.concat(written).toString() };
  }

  it("drops and counts what a full disk refuses, then says how many before the lines that follow", async () => {
    let full = true;
    const { output, text } = failingOutput(() => (full ? failure("ENOSPC") : undefined));
    for (let i = 0; i < 1000; i++) output.write(`${JSON.stringify({ i, filler: "x".repeat(80) })}\n`);
    // Retries meet the full disk too: what waits is dropped each time, not held for it.
    await sleep(600);
    full = false;
    for (let i = 1000; i < 1100; i++) output.write(`${JSON.stringify({ i })}\n`);
    output.flushSync();
    const lines = parsed(text().split("\n").slice(0, -1));
    expect(lines[0]).toMatchObject({ msg: "log lines dropped", dropped: 1000, reason: "writing stdout failed: ENOSPC" });
    expect(lines.slice(1).map((line) => line.i)).toEqual(ascending(100).map((i) => 1000 + i));
  });

  it("ends a line cut by a failed write before the notice, which stays whole", () => {
    const { output, text } = failingOutput((call) => (call === 2 ? failure("EIO") : undefined));
    output.write(`${JSON.stringify({ i: 0, stack: "s".repeat(6000) })}\n`);
    output.write(`${JSON.stringify({ i: 1 })}\n`);
    output.flushSync();
    output.write(`${JSON.stringify({ i: 2 })}\n`);
    output.flushSync();
    // The first 4 KB of the long line went out; the write of its rest failed.
    const [cut, notice, ...after] = text().split("\n");
    expect(cut).toHaveLength(4096);
    expect(JSON.parse(notice!)).toMatchObject({ msg: "log lines dropped", dropped: 1, reason: "writing stdout failed: EIO" });
    expect(after).toEqual([JSON.stringify({ i: 1 }), JSON.stringify({ i: 2 }), ""]);
  });
});
