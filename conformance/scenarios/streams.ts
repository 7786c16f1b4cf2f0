/** Starting, ending and listing streams (spec §2 Stream, §3 States, §4 streams endpoints). */
import { randomUUID } from "node:crypto";
import { check, expectEqual, expectError, expectStatus } from "../check.ts";
import type { Scenario } from "../scenario.ts";
import { listAll, startLiveStream, startStream, streamBody } from "./common.ts";

export const streamScenarios: Scenario[] = [
  {
    name: "a test-key stream is live at once, with test: true and no dispatch",
    tag: "behaviour",
    async run(ctx) {
      const created = await ctx.call("POST", "/streams", { body: await streamBody(ctx) });
      expectStatus(created, 201);
      expectEqual(created.body.status, "live", "status");
      expectEqual(created.body.test, true, "test");
      expectEqual([created.body.ws_url, created.body.viewer_token], [null, null], "ws_url and viewer_token");
      check(
        !("agent_dispatched" in created.body) && !("dispatch_method" in created.body),
        "a test-key stream reports agent dispatch",
      );
      const detail = await ctx.call("GET", `/streams/${created.body.stream_id}`);
      expectStatus(detail, 200);
      expectEqual([detail.body.status, detail.body.events], ["live", []], "status and events");
      check(
        detail.body.started_at !== null && detail.body.ended_at === null,
        "a live stream has started_at and no ended_at",
      );
      expectStatus(await ctx.call("DELETE", `/streams/${created.body.stream_id}`), 200);
    },
  },
  {
    name: "a live-key stream starts preparing, with dispatch fields and no test field",
    tag: "behaviour",
    needs: ["operator"],
    async run(ctx) {
      const { key, created } = await startLiveStream(ctx, 30);
      expectStatus(created, 201);
      expectEqual(created.body.status, "preparing", "status");
      check(!("test" in created.body), "a live-key stream has a test field");
      check(
        typeof created.body.agent_dispatched === "boolean" && "dispatch_method" in created.body,
        "agent_dispatched or dispatch_method missing",
      );
      const detail = await ctx.call("GET", `/streams/${created.body.stream_id}`, { key });
      expectEqual(
        [detail.body.status, detail.body.started_at],
        ["preparing", null],
        "status and started_at while preparing",
      );
    },
  },
  {
    name: "ending a live stream answers 200 once, then 404",
    tag: "behaviour",
    async run(ctx) {
      const id = await startStream(ctx);
      const ended = await ctx.call("DELETE", `/streams/${id}`);
      expectStatus(ended, 200);
      expectEqual([ended.body.stream_id, ended.body.status], [id, "ended"], "stream_id and status");
      expectError(await ctx.call("DELETE", `/streams/${id}`), 404, "not_found");
      const detail = await ctx.call("GET", `/streams/${id}`);
      expectEqual(
        [detail.body.status, detail.body.ended_at],
        ["ended", ended.body.ended_at],
        "status and ended_at after the end",
      );
      expectError(await ctx.call("DELETE", `/streams/${randomUUID()}`), 404, "not_found");
      expectError(await ctx.call("DELETE", "/streams/not-a-uuid"), 404, "not_found");
      expectError(await ctx.call("GET", `/streams/${randomUUID()}`), 404, "not_found");
      expectError(await ctx.call("GET", "/streams/not-a-uuid"), 404, "not_found");
    },
  },
  {
    name: "ending a preparing stream is 404",
    tag: "behaviour",
    needs: ["operator"],
    async run(ctx) {
      const { key, created } = await startLiveStream(ctx, 10);
      expectEqual(created.body.status, "preparing", "status");
      expectError(await ctx.call("DELETE", `/streams/${created.body.stream_id}`, { key }), 404, "not_found");
    },
  },
  {
    name: "launch_failed leaves a readable stream in error, which cannot be ended",
    tag: "behaviour",
    async run(ctx) {
      expectError(
        await ctx.call("POST", "/streams", {
          body: await streamBody(ctx, { product_name: "Slots sim:launch-failed" }),
        }),
        502,
        "launch_failed",
      );
      const errored = await ctx.call("GET", "/streams?status=error&limit=1");
      const id = errored.body.streams[0]?.id;
      check(id, "the failed stream is not listed with status error");
      const detail = await ctx.call("GET", `/streams/${id}`);
      expectEqual(detail.body.status, "error", "status");
      check(detail.body.ended_at !== null, "a stream in error has no ended_at");
      expectError(await ctx.call("DELETE", `/streams/${id}`), 404, "not_found");
    },
  },
  {
    name: "GET /streams clamps limit and offset and never answers 400",
    tag: "behaviour",
    async run(ctx) {
      // The bounds and defaults the contract states (StreamList limit/offset, the parameters' defaults).
      const { pageSize, offset } = ctx.contract.limits;
      const cases: Array<[query: string, limit: number, offset: number]> = [
        ["", pageSize.default, offset.default],
        [`limit=${pageSize.min - 1}`, pageSize.min, offset.default],
        ["limit=-5", pageSize.min, offset.default],
        [`limit=${pageSize.max * 10}`, pageSize.max, offset.default],
        [`limit=${pageSize.max}`, pageSize.max, offset.default],
        ["limit=abc", pageSize.default, offset.default],
        ["limit=", pageSize.default, offset.default],
        [`offset=${offset.min - 3}`, pageSize.default, offset.min],
        ["offset=xyz", pageSize.default, offset.default],
        [`limit=${pageSize.min + 6}&offset=${offset.min + 3}`, pageSize.min + 6, offset.min + 3],
        ["limit=99999999999999999999&offset=-99999999999999999999", pageSize.max, offset.min],
      ];
      for (const [query, limit, offset] of cases) {
        const page = await ctx.call("GET", `/streams?${query}`);
        expectStatus(page, 200);
        expectEqual([page.body.limit, page.body.offset], [limit, offset], `limit and offset for "${query}"`);
        check(page.body.streams.length <= limit, `"${query}" answered more than ${limit} streams`);
      }
      for (const query of ["limit=2.5", "offset=1e3", "limit=%00", "status=", "limit[]=4", "limit=2&limit=3"])
        expectStatus(await ctx.call("GET", `/streams?${query}`), 200);
    },
  },
  {
    name: "pages of GET /streams have no duplicates and no gaps",
    tag: "behaviour",
    async run(ctx) {
      const created: string[] = [];
      for (let i = 0; i < 23; i++) {
        const id = await startStream(ctx);
        created.push(id);
        // Ended at once, so the concurrency limit never stops the set-up.
        expectStatus(await ctx.call("DELETE", `/streams/${id}`), 200);
        await ctx.target.tick();
      }
      const { ids, totals } = await listAll(ctx, { limit: 5 });
      check(
        new Set(ids).size === ids.length,
        `a stream appears on two pages: ${ids.filter((id, i) => ids.indexOf(id) !== i).join(", ")}`,
      );
      check(
        totals.every((total) => total === totals[0]),
        `total changed between pages: ${totals.join(", ")}`,
      );
      expectEqual(ids.length, totals[0], "streams listed across pages vs total");
      const missing = created.filter((id) => !ids.includes(id));
      check(missing.length === 0, `streams missing from the pages: ${missing.join(", ")}`);
      const beyond = await ctx.call("GET", `/streams?limit=5&offset=${ids.length}`);
      expectEqual([beyond.body.streams.length, beyond.body.total], [0, totals[0]], "page past the end");
    },
  },
  {
    name: "GET /streams lists newest first",
    tag: "behaviour",
    async run(ctx) {
      const created: string[] = [];
      for (let i = 0; i < 3; i++) {
        await ctx.target.tick();
        const id = await startStream(ctx);
        created.push(id);
        expectStatus(await ctx.call("DELETE", `/streams/${id}`), 200);
      }
      const page = await ctx.call("GET", "/streams?limit=50");
      const ids: string[] = page.body.streams.map((stream: { id: string }) => stream.id);
      expectEqual(ids.slice(0, 3), [...created].reverse(), "the three newest streams");
      const times: string[] = page.body.streams.map((stream: { created_at: string }) => stream.created_at);
      times.slice(1).forEach((time, i) => {
        check(Date.parse(times[i]!) >= Date.parse(time), `created_at ${times[i]} listed before ${time}`);
      });
    },
  },
  {
    name: "the status filter matches exactly; an unknown status matches nothing",
    tag: "behaviour",
    async run(ctx) {
      const live = await startStream(ctx);
      const ended = await startStream(ctx);
      expectStatus(await ctx.call("DELETE", `/streams/${ended}`), 200);
      for (const [status, id] of [
        ["live", live],
        ["ended", ended],
      ] as const) {
        const { ids, items } = await listAll(ctx, { query: `status=${status}` });
        check(ids.includes(id), `status=${status} does not list ${id}`);
        check(
          items.every((item) => item.status === status),
          `status=${status} lists other statuses`,
        );
      }
      const none = await ctx.call("GET", "/streams?status=paused");
      expectStatus(none, 200);
      expectEqual([none.body.streams, none.body.total], [[], 0], "an unknown status");
      expectStatus(await ctx.call("DELETE", `/streams/${live}`), 200);
    },
  },
];
