import { describe, expect, it } from "vitest";
import { DatabaseError } from "../store/database.ts";
import { capturedLogs } from "../testing/log-capture.ts";
import { describeError } from "./logger.ts";

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

  it("describes an error by type, message and cause, with the stack only at debug", () => {
    const error = new DatabaseError("terminating connection", new Error("server closed the connection unexpectedly"));
    expect(describeError(capturedLogs("info").logger, error)).toEqual({ type: "DatabaseError", message: "terminating connection", cause: "server closed the connection unexpectedly" });
    expect(describeError(capturedLogs("debug").logger, error)).toMatchObject({ type: "DatabaseError", stack: expect.stringContaining("DatabaseError: terminating connection") });
    expect(describeError(capturedLogs("info").logger, "a string")).toEqual({ message: "a string" });
  });
});
