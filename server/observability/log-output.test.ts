import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const LOGGER = fileURLToPath(new URL("./logger.ts", import.meta.url));
const OUTPUT = fileURLToPath(new URL("./log-output.ts", import.meta.url));

/**
 * Runs `script` in a process of its own, its stdout a pipe this test reads only when it chooses
 * (a log reader that stalls), with `createLogger`, `LineOutput` and `report` (a JSON line on
 * stderr) in scope. Its stdin stays open until `release()`.
 */
function spawnLogging(script: string): { child: ChildProcess; reports: () => Promise<Record<string, number>>; readStdout: () => Promise<string[]>; release: () => void; exited: Promise<number | null> } {
  const source = [
    `import { createLogger } from ${JSON.stringify(LOGGER)};`,
    `import { LineOutput } from ${JSON.stringify(OUTPUT)};`,
    `import { writeSync } from "node:fs";`,
    `const report = (value) => writeSync(2, JSON.stringify(value) + "\\n");`,
    `const released = new Promise((resolve) => { process.stdin.on("end", resolve); process.stdin.resume(); });`,
    script,
  ].join("\n");
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", source], { stdio: ["pipe", "pipe", "pipe"] });
  const exited = once(child, "exit").then(([code]) => code as number | null);
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const reports = async () => {
    while (!stderr.includes("\n")) await Promise.race([once(child.stderr!, "data"), exited.then(() => Promise.reject(new Error(`exited before reporting: ${stderr}`)))]);
    return JSON.parse(stderr.slice(0, stderr.indexOf("\n"))) as Record<string, number>;
  };
  const readStdout = async () => {
    let text = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
    await once(child.stdout!, "end");
    return text.split("\n").filter((line) => line !== "");
  };
  return { child, reports, readStdout, release: () => child.stdin!.end(), exited };
}

/** 20,000 lines of about 250 bytes: 5 MB, many times what a pipe holds. */
const LINES = 20_000;

describe("log lines on stdout", () => {
  it("keeps the event loop turning while the reader stalls, and delivers every line in order once it reads", async () => {
    const run = spawnLogging(`
      const logger = createLogger();
      let ticks = 0;
      const ticking = setInterval(() => ticks++, 10);
      for (let i = 0; i < ${LINES}; i++) {
        logger.info({ i, filler: "x".repeat(150) }, "line");
        if (i % 1000 === 999) await new Promise((resolve) => setImmediate(resolve));
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      clearInterval(ticking);
      report({ ticks });
      await released;
    `);
    // Nothing is read from the child's stdout until it has logged everything and let its timers run.
    const { ticks } = await run.reports();
    expect(ticks).toBeGreaterThanOrEqual(10);
    const reading = run.readStdout();
    run.release();
    const lines = (await reading).map((line) => JSON.parse(line) as { i: number; msg: string });
    expect(await run.exited).toBe(0);
    expect(lines.map((line) => line.msg).filter((msg) => msg !== "line")).toEqual([]);
    expect(lines.map((line) => line.i)).toEqual(Array.from({ length: LINES }, (_, i) => i));
  });

  it("holds at most its bound for a stalled reader, then drops lines and says how many once the reader has caught up", async () => {
    const run = spawnLogging(`
      void process.stdout;
      const output = new LineOutput({ fd: 1, maxWaitingBytes: 200_000 });
      for (let i = 0; i < ${LINES}; i++) output.write(JSON.stringify({ i, filler: "x".repeat(200) }) + "\\n");
      report({ written: ${LINES} });
      await released;
      output.flushSync();
    `);
    await run.reports();
    const reading = run.readStdout();
    run.release();
    const lines = (await reading).map((line) => JSON.parse(line) as { i?: number; msg?: string; dropped?: number });
    expect(await run.exited).toBe(0);
    const notice = lines.at(-1)!;
    expect(notice).toMatchObject({ level: "warn", msg: "log lines dropped: stdout did not take them" });
    const delivered = lines.slice(0, -1).map((line) => line.i);
    // 200 KB held, plus what the pipe and this reader's stream buffer took (about 250 KB here):
    // far from the 4.5 MB written, and no line cut or out of order.
    expect(delivered.length).toBeLessThan(LINES / 4);
    expect(delivered).toEqual(Array.from({ length: delivered.length }, (_, i) => i));
    expect(notice.dropped).toBe(LINES - delivered.length);
  });

  it("exits promptly when the reader has gone", async () => {
    const run = spawnLogging(`
      const logger = createLogger();
      for (let i = 0; i < ${LINES}; i++) logger.info({ i, filler: "x".repeat(150) }, "line");
      report({ logged: ${LINES} });
    `);
    run.child.stdout!.destroy();
    run.release();
    await run.reports();
    expect(await run.exited).toBe(0);
  });

  it("gives up on a reader that never reads after a second, so the process can exit", async () => {
    const run = spawnLogging(`
      const logger = createLogger();
      for (let i = 0; i < ${LINES}; i++) logger.info({ i, filler: "x".repeat(150) }, "line");
      const exiting = Date.now();
      process.on("exit", () => report({ exitFlushMs: Date.now() - exiting }));
    `);
    run.release();
    // The exit flush waits for the reader: the report comes after it, and the stdout is never read.
    const { exitFlushMs } = await run.reports();
    expect(exitFlushMs).toBeGreaterThanOrEqual(900);
    expect(await run.exited).toBe(0);
  });
});
