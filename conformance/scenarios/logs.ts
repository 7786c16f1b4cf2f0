/** The request log: GET /requests and GET /requests/{request_id} (DESIGN.md §6, scope `logs:read`). */
import { randomUUID } from "node:crypto";
import { check, expectEqual, expectError, expectStatus } from "../check.ts";
import type { Scenario } from "../scenario.ts";

/** Entries are written in batches about half a second after their answer: a read waits this long at most. */
const WRITTEN_WITHIN_MS = 5_000;

export const logScenarios: Scenario[] = [
  {
    name: "GET /requests: a malformed filter is 400 invalid_fields, an out-of-range limit is clamped",
    tag: "contract",
    async run(ctx) {
      for (const bad of ["status=4x", "method=get", "path=streams", "since=yesterday", "starting_after=5"])
        expectError(await ctx.call("GET", `/requests?${bad}`), 400, "invalid_fields");
      for (const limit of ["0", "1000", "ten"]) expectStatus(await ctx.call("GET", `/requests?limit=${limit}`), 200);
    },
  },
  {
    name: "the request log lists a refused request with its key, and reads it with its bodies; an unknown id is 404",
    tag: "behaviour",
    async run(ctx) {
      const refused = await ctx.call("GET", `/streams/${randomUUID()}`);
      expectError(refused, 404, "not_found");
      const requestId = refused.headers.get("request-id");
      check(requestId, "the answer has no Request-Id");
      const deadline = Date.now() + WRITTEN_WITHIN_MS;
      let listed: { request_id: string; status: number; error_code: string | null; path: string } | undefined;
      while (!listed && Date.now() < deadline) {
        const page = await ctx.call("GET", "/requests?status=404&path=/streams&limit=100");
        expectStatus(page, 200);
        listed = page.body.requests.find((entry: { request_id: string }) => entry.request_id === requestId);
        if (!listed) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      check(listed, `the 404 of ${requestId} is not in GET /requests within ${WRITTEN_WITHIN_MS} ms`);
      expectEqual(
        { status: listed.status, error_code: listed.error_code },
        { status: 404, error_code: "not_found" },
        "entry",
      );
      const detail = await ctx.call("GET", `/requests/${requestId}`);
      expectStatus(detail, 200);
      expectEqual(JSON.parse(detail.body.response_body), refused.body, "the stored answer");
      expectError(await ctx.call("GET", "/requests/req_no_such_request"), 404, "not_found");
    },
  },
];
