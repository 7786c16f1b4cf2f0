import { pino, type DestinationStream, type Logger } from "pino";
import type { LogLevel } from "../config.ts";
import { stdoutLines } from "./log-output.ts";

export type { Logger, LogLevel };

/**
 * The server's one logger: a JSON line per event on stdout (or on `destination`, which is how
 * tests read them), the level as its name and the time as ISO 8601, so the lines read the same
 * in a terminal and in a log pipeline. Callers log ids and counts, never a key, a secret, an
 * Authorization header or a body.
 *
 * Stdout is written in batches (`LineOutput`): under load, one write system call per request
 * line costs the server more than building the line, so lines are buffered and written when
 * 4 KB have gathered or 250 ms have passed, whichever comes first, and what is left when the
 * process exits (graceful shutdown included); only a death that skips the exit handlers (SIGKILL,
 * an unhandled SIGHUP, running out of memory) can lose the last quarter second of lines. A log
 * reader that stalls never blocks the server.
 */
export function createLogger({ level = "info", destination }: { level?: LogLevel; destination?: DestinationStream } = {}): Logger {
  const options = {
    level,
    timestamp: isoTimeOncePerMillisecond(),
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return pino(options, destination ?? stdoutLines());
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

/**
 * What a log line says about an error: its type and message, and the stack only when the logger
 * is at debug or below (stacks are long, and the message is what an operator acts on).
 */
export function describeError(logger: Logger, error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  const cause = error.cause instanceof Error && error.cause.message !== error.message ? { cause: error.cause.message } : {};
  return { type: error.name, message: error.message, ...cause, ...(logger.isLevelEnabled("debug") && error.stack ? { stack: error.stack } : {}) };
}
