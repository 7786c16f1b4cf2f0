/** The test clock: GET /test-clock and POST /test-clock/advance (test keys only). */
import type { Response } from "express";
import type { components } from "../../../generated/api.ts";
import { ApiError } from "../../domain/errors.ts";
import type { ServiceContext } from "../../services/context.ts";
import { advanceTestClock, readTestClock, type TestClock } from "../../services/test-clock.ts";
import type { OperationHandlers } from "../dispatch.ts";
import { callerOf } from "../guard.ts";

/** The TestClock schema's body: the test clock's time and how far it runs ahead, in seconds. */
export function testClockBody(clock: TestClock): components["schemas"]["TestClock"] {
  return { now: clock.now.toISOString(), offset_seconds: clock.offsetSeconds };
}

/** The caller's brand, refusing a live key: the test clock is a test-mode tool, live mode runs on the real time. */
function testModeBrand(res: Response, operation: string): string {
  const caller = callerOf(res);
  if (caller.mode !== "test")
    throw new ApiError("test_mode_only", `${operation} is a test-mode tool; use a test key (svc_test_…).`);
  return caller.brand.id;
}

export function testClockHandlers(ctx: ServiceContext): OperationHandlers<"getTestClock" | "advanceTestClock"> {
  return {
    async getTestClock(_req, res) {
      res.json(testClockBody(await readTestClock(ctx, testModeBrand(res, "GET /test-clock"))));
    },
    async advanceTestClock(req, res) {
      const brandId = testModeBrand(res, "POST /test-clock/advance");
      res.json(testClockBody(await advanceTestClock(ctx, brandId, req.body.seconds)));
    },
  };
}
