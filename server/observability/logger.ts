import { writeSync } from "node:fs";
import { pino, type DestinationStream, type Logger } from "pino";
import type { SonicBoom } from "sonic-boom";
import type { LogLevel } from "../config.ts";

export type { Logger, LogLevel };

/**
 * Lines are written once about 4 KB has gathered (some eighteen request lines per write), in
 * writes of at most 4 KB: Linux's PIPE_BUF, so a write to a pipe goes in whole or not at all and
 * a line is never cut by whatever else writes to the same stdout (console.log).
 */
const WRITE_BYTES = 4000;
const PIPE_BUF = 4096;
/** How long a line may wait in the batch before it is written, at the quietest. */
const FLUSH_INTERVAL_MS = 250;
/** What may wait for a reader that is behind; past it, lines are dropped and counted. */
const MAX_WAITING_BYTES = 16 * 1024 * 1024;
/** How long the final flush (shutdown, exit) waits for a reader that takes nothing. */
export const FINAL_FLUSH_MS = 1000;

/**
 * The server's one logger: a JSON line per event on stdout (or on `destination`, which is how
 * tests read them), the level as its name and the time as ISO 8601, so the lines read the same
 * in a terminal and in a log pipeline. An error is logged under `error`, by pino's own error
 * serializer (type, message with its causes, stack) less the fields that quote rows (see
 * errorWithoutRowData). Callers log ids and counts, never a key, a
 * secret, an Authorization header or a body.
 */
export function createLogger({
  level = "info",
  destination,
}: {
  level?: LogLevel;
  destination?: DestinationStream;
} = {}): Logger {
  const options = {
    level,
    timestamp: isoTimeOncePerMillisecond(),
    formatters: { level: (label: string) => ({ level: label }) },
    serializers: { error: errorWithoutRowData, err: errorWithoutRowData },
  };
  if (destination) return pino(options, destination);
  const logger = pino(options, stdoutLines());
  dropLogger ??= logger;
  return logger;
}

/**
 * Fields of a database driver's error that quote rows or statements: PostgreSQL's `detail` names
 * the values of a violated key ("Key (email)=(…) already exists"), `where` and `internalQuery`
 * the statement, `parameters` what was bound. They would put members' emails in the logs.
 */
const ROW_QUOTING_FIELDS = new Set(["detail", "where", "internalQuery", "query", "parameters", "params", "values"]);
/** How deep nested errors and causes are searched for them. */
const MAX_DEPTH = 8;

/** pino's error serializer, then every row-quoting field dropped, in nested errors and causes too. */
export function errorWithoutRowData(error: unknown): unknown {
  return withoutRowData(pino.stdSerializers.err(error as Error), 0);
}

function withoutRowData(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== "object" || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => withoutRowData(item, depth + 1));
  const kept: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value))
    if (!ROW_QUOTING_FIELDS.has(key)) kept[key] = withoutRowData(field, depth + 1);
  return kept;
}

let stdout: SonicBoom | undefined;
/** Past this time a write the reader does not take is given up (set by the final flush). */
let giveUpAt = Number.POSITIVE_INFINITY;

/**
 * Stdout through pino's own destination (sonic-boom) in its asynchronous mode, with its options:
 * lines gather up to 4 KB (or 250 ms) and are written from libuv's thread pool, so a reader that
 * stalls never blocks the event loop. Opening Node's stdout stream first puts a pipe on fd 1 into
 * non-blocking mode: a write the reader is not ready for answers EAGAIN and is tried again 100 ms
 * later (`retryEAGAIN`) instead of holding a thread, until the final flush gives up. What waits
 * is bounded at 16 MB (`maxLength`): past that, lines are dropped (`drop`), counted, and one
 * line says how many. pino's destination turns a reader that is gone (EPIPE) into a sink and
 * flushes what waits when the process exits. One destination for every logger of the process,
 * so their lines keep their order.
 */
function stdoutLines(): SonicBoom {
  if (stdout) return stdout;
  void process.stdout;
  const destination = pino.destination({
    dest: 1,
    sync: false,
    minLength: WRITE_BYTES,
    maxWrite: PIPE_BUF,
    maxLength: MAX_WAITING_BYTES,
    periodicFlush: FLUSH_INTERVAL_MS,
    retryEAGAIN: () => Date.now() < giveUpAt,
  });
  // Logging never throws into a request: a failed write (EPIPE, ENOSPC, EAGAIN given up) is said
  // once on stderr, and later lines are tried again.
  let failed = false;
  // The last write failed (ENOSPC, EAGAIN given up): flushSync would retry it forever at exit.
  let failing = false;
  destination.on("error", (error: NodeJS.ErrnoException) => {
    if (!failed) toStderr(`log output: ${error.code ?? error.message}; log lines may be lost`);
    failed = true;
    failing = true;
  });
  destination.on("write", () => (failing = false));
  destination.on("drop", () => {
    dropped += 1;
    droppedInAll += 1;
    if (dropped === 1) destination.once("drain", reportDropped);
  });
  // pino flushes at exit with flushSync, which throws for a write that fails for good: the exit
  // flush gets FINAL_FLUSH_MS (not waited again after flushLogs gave up) and never throws.
  const flushSync = destination.flushSync.bind(destination);
  destination.flushSync = () => {
    giveUpAt = Math.min(giveUpAt, Date.now() + FINAL_FLUSH_MS);
    try {
      if (failing) throw new Error("the last write failed");
      flushSync();
      // Dropped lines not yet reported: the process ends before the reader caught up.
      if (dropped > 0) {
        reportDropped();
        flushSync();
      }
    } catch (error) {
      toStderr(
        `log output: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; the last log lines were not written`,
      );
    }
  };
  stdout = destination;
  return destination;
}

/** Lines dropped since stdout last caught up, in all (the metric), and the logger that says how many. */
let dropped = 0;
let droppedInAll = 0;
let dropLogger: Logger | undefined;

/** Log lines dropped so far because the reader of stdout fell 16 MB behind (log_lines_dropped_total). */
export function droppedLogLines(): number {
  return droppedInAll;
}

/** Says how many lines were dropped, if any. */
function reportDropped(): void {
  if (dropped === 0 || !dropLogger) return;
  const count = dropped;
  dropped = 0;
  dropLogger.warn({ dropped: count }, `${count} log line(s) dropped: the reader of stdout fell 16 MB behind`);
}

/**
 * Waits for the lines written so far to reach stdout, at most FINAL_FLUSH_MS (a graceful stop
 * calls it before exiting; if the reader took nothing meanwhile, the exit does not wait again).
 */
export function flushLogs(logger: Logger): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      giveUpAt = Date.now();
      resolve();
    }, FINAL_FLUSH_MS);
    logger.flush(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function toStderr(message: string): void {
  try {
    writeSync(2, `${message}\n`);
  } catch {
    // stderr is gone too: there is no one left to tell.
  }
}

/**
 * pino's `isoTime` (`,"time":"2026-11-25T01:02:03.456Z"`), formatted once per millisecond: a busy
 * server logs several lines in the same millisecond, and `toISOString` is a visible part of a
 * line's cost.
 */
function isoTimeOncePerMillisecond(): () => string {
  let formattedAt = Number.NaN;
  let formatted = "";
  return () => {
    const now = Date.now();
    if (now !== formattedAt) {
      formattedAt = now;
      formatted = `,"time":"${new Date(now).toISOString()}"`;
    }
    return formatted;
  };
}

/** A logger that writes nothing: the test harness's default. */
export function silentLogger(): Logger {
  return createLogger({ level: "silent", destination: { write: () => undefined } });
}
