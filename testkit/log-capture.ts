import type { LogLevel } from "../server/config.ts";
import { createLogger, type Logger } from "../server/observability/logger.ts";

/** A log line as the server writes it. */
export type LogEntry = Record<string, any> & { level: string; msg: string };

/**
 * A logger whose lines are kept instead of written, for tests that check what is logged. `raw`
 * is every line as written; `take()` parses and empties them.
 */
export function capturedLogs(level: LogLevel = "debug"): { logger: Logger; raw: string[]; take(): LogEntry[] } {
  const raw: string[] = [];
  const logger = createLogger({
    level,
    destination: {
      write(chunk: string) {
        for (const line of chunk.split("\n")) if (line !== "") raw.push(line);
      },
    },
  });
  return { logger, raw, take: () => raw.splice(0).map((line) => JSON.parse(line) as LogEntry) };
}
