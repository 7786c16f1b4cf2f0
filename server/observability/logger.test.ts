import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DatabaseError } from "../store/database.ts";
import { availableEngines, freshDatabase } from "../../testkit/harness.ts";
import { capturedLogs } from "../../testkit/log-capture.ts";

const LOGGER = fileURLToPath(new URL("./logger.ts", import.meta.url));

/** Runs `script` in a process of its own with the logger as `createLogger`; its stdout and exit code. */
function runWithLogger(script: string): { stdout: string; status: number | null } {
  const source = `import { createLogger } from ${JSON.stringify(LOGGER)};\n${script}`;
  const result = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", source], {
    encoding: "utf8",
    timeout: 30_000,
  });
  return { stdout: result.stdout, status: result.status };
}

describe("the logger", () => {
  it("writes JSON lines with the level by name and an ISO time", () => {
    const { logger, take } = capturedLogs("info");
    logger.info({ moved: 2 }, "lifecycle sweep moved streams");
    logger.debug("not written at info");
    const [line, ...rest] = take();
    expect(rest).toEqual([]);
    expect(line).toMatchObject({ level: "info", msg: "lifecycle sweep moved streams", moved: 2 });
    expect(new Date(line!.time).toISOString()).toBe(line!.time);
  });

  it("logs an error under `error` by pino's serializer: type, message with its cause, stack", () => {
    const { logger, take } = capturedLogs("info");
    const error = new DatabaseError("terminating connection", new Error("server closed the connection unexpectedly"));
    logger.error({ error }, "server error");
    logger.error({ error: "a string" }, "not an Error");
    const [serialized, text] = take();
    expect(serialized!.error).toMatchObject({
      type: "DatabaseError",
      message: "terminating connection: server closed the connection unexpectedly",
      stack: expect.stringContaining("DatabaseError: terminating connection"),
    });
    expect(text!.error).toBe("a string");
  });

  it.each(availableEngines())(
    "keeps a unique violation's detail, which quotes the row, out of the log on %s",
    async (engine) => {
      const { db, drop } = await freshDatabase(engine);
      try {
        await db.exec("CREATE TABLE people (email text UNIQUE)");
        await db.query("INSERT INTO people VALUES ($1)", ["alice@example.com"]);
        const violation = await db.query("INSERT INTO people VALUES ($1)", ["alice@example.com"]).then(
          () => expect.unreachable("the second insert must fail"),
          (error: unknown) => error,
        );
        // The driver's own error, as a nested field and as a cause that is not an Error.
        const { cause } = violation as { cause?: unknown };
        const raw = cause instanceof Error ? cause : violation;
        expect(JSON.stringify(raw, Object.getOwnPropertyNames(raw))).toContain("alice@example.com");
        const { logger, raw: lines } = capturedLogs("info");
        logger.error({ error: violation }, "write failed");
        logger.error({ error: raw }, "write failed");
        logger.error({ err: Object.assign(new Error("wrapped"), { original: raw }) }, "write failed");
        logger.error({ error: new DatabaseError("write failed", { ...(raw as object) }) }, "write failed");
        expect(lines.join("")).toContain("duplicate key");
        expect(lines.join("")).not.toContain("alice@example.com");
      } finally {
        await drop();
      }
    },
  );

  // Stdout is written in batches (4 KB or 250 ms): what is buffered must still go out when the
  // process ends, however it ends short of a SIGKILL.
  it.each([
    ["exits at once", "process.exit(3)", 3],
    ["dies of an uncaught exception", "setImmediate(() => { throw new Error('boom'); })", 1],
    ["runs out of work", "", 0],
  ])("writes buffered lines to stdout when the process %s", (_how, ending, expectedStatus) => {
    const { stdout, status } = runWithLogger(
      `const a = createLogger(); const b = createLogger();\na.info({ n: 1 }, "first");\nb.warn({ n: 2 }, "second");\n${ending}`,
    );
    expect(status).toBe(expectedStatus);
    const lines = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toMatchObject([
      { level: "info", msg: "first", n: 1 },
      { level: "warn", msg: "second", n: 2 },
    ]);
  });
});
