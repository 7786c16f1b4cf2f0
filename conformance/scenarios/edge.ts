/**
 * What any implementation answers before an endpoint's own rules: the base path, paths the
 * contract does not name (a trailing slash included), malformed bodies and cross-origin requests.
 * Contract scenarios, so the mock must answer them exactly as the server does.
 */
import { check, expectError } from "../check.ts";
import type { Scenario } from "../scenario.ts";
import { streamBody } from "./common.ts";

export const edgeScenarios: Scenario[] = [
  {
    name: "the API is served under /api/v1; a trailing slash or an unknown path is 404 not_found",
    tag: "contract",
    async run(ctx) {
      check(
        new URL(ctx.target.apiBase).pathname === "/api/v1",
        `the API base ${ctx.target.apiBase} does not end in /api/v1`,
      );
      // Generated clients read `/streams/` as `/streams/{id}` with an empty id: it is never the list.
      expectError(await ctx.call("GET", "/streams/"), 404, "not_found");
      expectError(await ctx.call("DELETE", "/streams/"), 404, "not_found");
      expectError(await ctx.call("POST", "/streams/", { body: await streamBody(ctx) }), 404, "not_found");
      expectError(await ctx.call("GET", "/webhooks/"), 404, "not_found");
      expectError(await ctx.call("GET", "/no-such-endpoint"), 404, "not_found");
      expectError(await ctx.call("PUT", "/streams"), 404, "not_found");
    },
  },
  {
    name: "a body that is not JSON is missing_fields",
    tag: "contract",
    async run(ctx) {
      for (const path of ["/streams", "/webhooks"]) {
        expectError(await ctx.call("POST", path, { rawBody: "{not json" }), 400, "missing_fields");
        expectError(await ctx.call("POST", path, { rawBody: "" }), 400, "missing_fields");
        expectError(
          await ctx.call("POST", path, { rawBody: "creator_id=avt_x", contentType: "text/plain" }),
          400,
          "missing_fields",
        );
      }
    },
  },
  {
    name: "no CORS: a preflight is 404 not_found and no answer allows another origin",
    tag: "contract",
    async run(ctx) {
      const origin = "https://shop.example.com";
      const preflight = await ctx.call("OPTIONS", "/streams", {
        key: null,
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization,content-type",
        },
      });
      expectError(preflight, 404, "not_found");
      for (const answer of [
        preflight,
        await ctx.call("GET", "/creators", { headers: { origin } }),
        await ctx.call("GET", "/streams", { headers: { origin } }),
      ]) {
        check(
          answer.headers.get("access-control-allow-origin") === null,
          `${answer.request.method} ${answer.request.path} allows another origin`,
        );
      }
    },
  },
];
