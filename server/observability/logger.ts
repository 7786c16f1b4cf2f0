import { pino, type DestinationStream, type Logger } from "pino";
import type { LogLevel } from "../config.ts";

export type { Logger, LogLevel };

/**
 * The server's one logger: a JSON line per event on stdout (or on `destination`, which is how
 * tests read them), the level as its name and the time as ISO 8601, so the lines read the same
 * in a terminal and in a log pipeline. Callers log ids and counts, never a key, a secret, an
 * Authorization header or a body.
 *
 * Stdout is written asynchronously: a line goes out at once when no write is pending, and lines
 * logged meanwhile go out together in the next write, so under load a request does not wait for
 * its own write system call. pino flushes what is left when the process exits.
 */
export function createLogger({ level = "info", destination }: { level?: LogLevel; destination?: DestinationStream } = {}): Logger {
  const options = {
    level,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
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
