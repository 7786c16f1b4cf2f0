/**
 * The error codes that need a particular request or brand (spec §4 POST /streams, §7): each is
 * reached on purpose, in the documented check order.
 */
import { randomUUID } from "node:crypto";
import { check, expectError, expectStatus } from "../check.ts";
import type { Scenario } from "../scenario.ts";
import { callSample, startStream, streamBody } from "./common.ts";

export const errorScenarios: Scenario[] = [
  {
    name: "POST /streams: missing_fields, invalid_fields and invalid_creator",
    tag: "behaviour",
    async run(ctx) {
      const valid = await streamBody(ctx);
      const { platform: _platform, ...withoutPlatform } = valid;
      // The edges the contract states: StreamCreate's duration range and text lengths.
      const { durationMinutes } = ctx.contract.limits;
      const fields = ctx.contract.operation("createStream").requestSchema!.properties;
      const [productName, script] = [fields.product_name.maxLength as number, fields.script.maxLength as number];
      const cases: Array<[body: unknown, code: string]> = [
        [withoutPlatform, "missing_fields"],
        [{ ...withoutPlatform, duration_minutes: durationMinutes.min - 1 }, "missing_fields"],
        [{ ...valid, duration_minutes: durationMinutes.min - 1 }, "invalid_fields"],
        [{ ...valid, duration_minutes: durationMinutes.max + 1 }, "invalid_fields"],
        [{ ...valid, duration_minutes: 1.5 }, "invalid_fields"],
        [{ ...valid, duration_minutes: "30" }, "invalid_fields"],
        [{ ...valid, product_name: "x".repeat(productName + 1) }, "invalid_fields"],
        [{ ...valid, script: "x".repeat(script + 1) }, "invalid_fields"],
        [{ ...valid, platform: "myspace" }, "invalid_fields"],
        [{ ...valid, creator_id: `avt_${"x".repeat(61)}` }, "invalid_fields"],
        [{ ...valid, vertical: "gaming" }, "invalid_fields"],
        [{ ...valid, colour: "red" }, "invalid_fields"],
        [{ ...valid, creator_id: "avt_ZxZxZxZxZxZx" }, "invalid_creator"],
        [{ ...valid, creator_id: "alicia-jerde" }, "invalid_creator"],
      ];
      for (const [body, code] of cases) expectError(await ctx.call("POST", "/streams", { body }), 400, code);
      expectError(await ctx.call("POST", "/streams", { rawBody: "{not json" }), 400, "missing_fields");
      expectError(
        await ctx.call("POST", "/streams", { rawBody: JSON.stringify(valid), contentType: "text/plain" }),
        400,
        "missing_fields",
      );
      const atLimits = {
        ...valid,
        product_name: "x".repeat(productName),
        script: "x".repeat(script),
        duration_minutes: durationMinutes.max,
      };
      const accepted = await ctx.call("POST", "/streams", { body: atLimits });
      expectStatus(accepted, 201);
      expectStatus(await ctx.call("DELETE", `/streams/${accepted.body.stream_id}`), 200);
    },
  },
  {
    name: "GET /analytics: invalid_fields for a bad period or stream_id",
    tag: "behaviour",
    async run(ctx) {
      for (const query of ["period=1y", "period=7D", "stream_id=not-a-uuid"])
        expectError(await ctx.call("GET", `/analytics?${query}`), 400, "invalid_fields");
      const periods = ctx.contract.limits.periods.values.map((period) => `period=${period}`);
      for (const query of ["", ...periods, `stream_id=${randomUUID()}`])
        expectStatus(await ctx.call("GET", `/analytics?${query}`), 200);
    },
  },
  {
    name: "vertical_mismatch for another vertical or a platform the vertical does not allow",
    tag: "behaviour",
    needs: ["operator"],
    async run(ctx) {
      const igaming = (await (await ctx.tenant({ vertical: "igaming" })).key()).key;
      expectError(
        await ctx.call("POST", "/streams", { key: igaming, body: await streamBody(ctx, { platform: "tiktok" }) }),
        403,
        "vertical_mismatch",
      );
      for (const platform of ["kick", "youtube", "twitch"]) {
        const id = await startStream(ctx, igaming, { platform });
        expectStatus(await ctx.call("DELETE", `/streams/${id}`, { key: igaming }), 200);
      }
      const commerce = (await (await ctx.tenant({ vertical: "live-commerce" })).key()).key;
      expectError(
        await ctx.call("POST", "/streams", { key: commerce, body: await streamBody(ctx, { vertical: "igaming" }) }),
        403,
        "vertical_mismatch",
      );
    },
  },
  {
    name: "live keys: missing duration, no_minutes before insufficient_credits",
    tag: "behaviour",
    needs: ["operator"],
    async run(ctx) {
      const broke = await ctx.tenant({ credits_cents: 0 });
      const brokeKey = (await broke.key({ environment: "live" })).key;
      expectError(
        await ctx.call("POST", "/streams", { key: brokeKey, body: await streamBody(ctx) }),
        400,
        "missing_fields",
      );
      expectError(
        await ctx.call("POST", "/streams", { key: brokeKey, body: await streamBody(ctx, { duration_minutes: 60 }) }),
        402,
        "insufficient_credits",
      );
      const used = await ctx.tenant({ credits_cents: 0, plan_minutes: 0 });
      const usedKey = (await used.key({ environment: "live" })).key;
      expectError(
        await ctx.call("POST", "/streams", { key: usedKey, body: await streamBody(ctx, { duration_minutes: 60 }) }),
        402,
        "no_minutes",
      );
      const testKey = (await used.key({ environment: "test" })).key;
      expectStatus(await ctx.call("POST", "/streams", { key: testKey, body: await streamBody(ctx) }), 201);
    },
  },
  {
    name: "the fourth active stream is concurrency_limit until one ends; modes count apart",
    tag: "behaviour",
    needs: ["operator"],
    async run(ctx) {
      const tenant = await ctx.tenant({ max_active_streams: 3 });
      const key = (await tenant.key()).key;
      const ids = [await startStream(ctx, key), await startStream(ctx, key), await startStream(ctx, key)];
      for (let attempt = 0; attempt < 2; attempt++)
        expectError(await ctx.call("POST", "/streams", { key, body: await streamBody(ctx) }), 429, "concurrency_limit");
      const live = (await tenant.key({ environment: "live" })).key;
      expectStatus(
        await ctx.call("POST", "/streams", { key: live, body: await streamBody(ctx, { duration_minutes: 5 }) }),
        201,
      );
      expectStatus(await ctx.call("DELETE", `/streams/${ids[0]}`, { key }), 200);
      await startStream(ctx, key);
    },
  },
  {
    name: "a database failure is 500 db_error where documented, 404 on GET /streams/{id}, 500 on an end",
    tag: "behaviour",
    needs: ["faults"],
    async run(ctx) {
      const streamId = await startStream(ctx);
      ctx.target.failDatabase!(true);
      try {
        for (const op of ctx.contract.publicOperations.filter((candidate) => candidate.responses.has(500))) {
          expectError(await callSample(ctx, op, { key: op.secured ? ctx.key : null }), 500, "db_error");
        }
        // The spec: GET /streams/{id} reports lookup failures as 404, never 500. An end whose
        // outcome is unknown is 500 db_error (1.4.0), never a 404 for a stream that stays live.
        expectError(await ctx.call("GET", `/streams/${streamId}`), 404, "not_found");
        expectError(await ctx.call("DELETE", `/streams/${streamId}`), 500, "db_error");
      } finally {
        ctx.target.failDatabase!(false);
      }
      check(
        (await ctx.call("GET", `/streams/${streamId}`)).status === 200,
        "the stream is not readable once the database is back",
      );
      expectStatus(await ctx.call("DELETE", `/streams/${streamId}`), 200);
    },
  },
  {
    name: "an unexpected fault that is not the database's is 500 internal_error where documented, 404 on GET /streams/{id}",
    tag: "behaviour",
    needs: ["faults"],
    async run(ctx) {
      const streamId = await startStream(ctx);
      ctx.target.failDatabase!(true, "unexpected");
      try {
        for (const op of ctx.contract.publicOperations.filter((candidate) => candidate.responses.has(500))) {
          expectError(await callSample(ctx, op, { key: op.secured ? ctx.key : null }), 500, "internal_error");
        }
        expectError(await ctx.call("GET", `/streams/${streamId}`), 404, "not_found");
      } finally {
        ctx.target.failDatabase!(false);
      }
      expectStatus(await ctx.call("DELETE", `/streams/${streamId}`), 200);
    },
  },
];
