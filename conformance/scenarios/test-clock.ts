/**
 * The test clock (DESIGN.md §6, "Test clock", "Test-mode markers"): a brand's test mode runs on its
 * own clock, which an advance moves forward; a stream marked `sim:never-joins` stays `preparing`
 * until the time-out, a 30-minute stream ends 30 minutes after it went live, both when the clock
 * passes them. Each scenario uses a brand of its own, whose clock no other scenario moves.
 */
import { check, expectEqual, expectError, expectStatus } from "../check.ts";
import type { Scenario } from "../scenario.ts";
import { startStream, streamBody } from "./common.ts";

const ms = (iso: unknown) => Date.parse(String(iso));

export const testClockScenarios: Scenario[] = [
  {
    name: "test clock: reads 0 ahead, advances 1 s to 7 days a call, never back; a live key gets test_mode_only",
    tag: "behaviour",
    needs: ["operator"],
    async run(ctx) {
      const tenant = await ctx.tenant();
      const { key } = await tenant.key();
      const first = await ctx.call("GET", "/test-clock", { key });
      expectStatus(first, 200);
      expectEqual(first.body.offset_seconds, 0, "the offset before any advance");
      const moved = await ctx.call("POST", "/test-clock/advance", { key, body: { seconds: 7_200 } });
      expectStatus(moved, 200);
      expectEqual(moved.body.offset_seconds, 7_200, "the offset after advancing 2 hours");
      const ahead = ms(moved.body.now) - ms(first.body.now);
      check(ahead >= 7_200_000 && ahead < 7_260_000, `the clock moved ${ahead} ms, not 2 hours`);
      for (const seconds of [0, -1, 604_801, 1.5, "60"])
        expectError(await ctx.call("POST", "/test-clock/advance", { key, body: { seconds } }), 400, "invalid_fields");
      expectError(await ctx.call("POST", "/test-clock/advance", { key, body: {} }), 400, "missing_fields");
      expectEqual(
        (await ctx.call("GET", "/test-clock", { key })).body.offset_seconds,
        7_200,
        "the offset after refused advances",
      );
      const live = (await tenant.key({ environment: "live" })).key;
      expectError(await ctx.call("GET", "/test-clock", { key: live }), 403, "test_mode_only");
      expectError(
        await ctx.call("POST", "/test-clock/advance", { key: live, body: { seconds: 60 } }),
        403,
        "test_mode_only",
      );
    },
  },
  {
    name: "test clock: sim:never-joins stays preparing until the 5-minute time-out; a 30-minute stream ends after 30 minutes",
    tag: "behaviour",
    needs: ["operator"],
    async run(ctx) {
      const { key } = await (await ctx.tenant()).key();
      const created = await ctx.call("POST", "/streams", {
        key,
        body: await streamBody(ctx, { product_name: "Conformance sim:never-joins" }),
      });
      expectStatus(created, 201);
      expectEqual(created.body.status, "preparing", "a test stream marked sim:never-joins");
      const never = created.body.stream_id as string;
      const thirty = await startStream(ctx, key, { duration_minutes: 30 });

      expectStatus(await ctx.call("POST", "/test-clock/advance", { key, body: { seconds: 299 } }), 200);
      expectEqual((await ctx.call("GET", `/streams/${never}`, { key })).body.status, "preparing", "at 4 min 59 s");
      expectStatus(await ctx.call("POST", "/test-clock/advance", { key, body: { seconds: 1 } }), 200);
      const failed = await ctx.call("GET", `/streams/${never}`, { key });
      expectEqual(failed.body.status, "error", "at 5 minutes");
      expectEqual(failed.body.started_at, null, "started_at of a stream that never went live");
      expectEqual(ms(failed.body.ended_at) - ms(created.body.created_at), 300_000, "the time-out, on the clock");

      expectEqual((await ctx.call("GET", `/streams/${thirty}`, { key })).body.status, "live", "at 5 minutes");
      expectStatus(await ctx.call("POST", "/test-clock/advance", { key, body: { seconds: 26 * 60 } }), 200);
      const ended = await ctx.call("GET", `/streams/${thirty}`, { key });
      expectEqual(ended.body.status, "ended", "at 31 minutes");
      expectEqual(ms(ended.body.ended_at) - ms(ended.body.started_at), 1_800_000, "ended_at − started_at");
    },
  },
];
