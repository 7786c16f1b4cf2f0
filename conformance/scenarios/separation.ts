/**
 * Data is scoped to the brand (spec §1 rule 1) and, as decided in DESIGN.md §5, to the key's
 * mode: test keys and live keys see separate streams, webhooks and analytics.
 */
import { check, expectEqual, expectError, expectStatus } from "../check.ts";
import type { Scenario, ScenarioContext } from "../scenario.ts";
import { listAll, streamBody } from "./common.ts";

/** `reader` cannot see, end or delete what `owner` made, and owner's data is untouched afterwards. */
async function expectInvisible(
  ctx: ScenarioContext,
  reader: string,
  owner: string,
  streamId: string,
  webhookId: string,
): Promise<void> {
  expectError(await ctx.call("GET", `/streams/${streamId}`, { key: reader }), 404, "not_found");
  expectError(await ctx.call("DELETE", `/streams/${streamId}`, { key: reader }), 404, "not_found");
  check(!(await listAll(ctx, { key: reader })).ids.includes(streamId), "the other side lists the stream");
  const webhooks = await ctx.call("GET", "/webhooks", { key: reader });
  check(
    !webhooks.body.webhooks.some((webhook: { webhook_id: string }) => webhook.webhook_id === webhookId),
    "the other side lists the webhook",
  );
  expectEqual(
    (await ctx.call("DELETE", `/webhooks?id=${webhookId}`, { key: reader })).body.deleted,
    true,
    "deleting the other side's webhook",
  );
  const ownWebhooks = await ctx.call("GET", "/webhooks", { key: owner });
  check(
    ownWebhooks.body.webhooks.some((webhook: { webhook_id: string }) => webhook.webhook_id === webhookId),
    "the other side deleted the owner's webhook",
  );
  expectEqual(
    (await ctx.call("GET", `/streams/${streamId}`, { key: owner })).body.status,
    "live",
    "the owner's stream after the other side tried to end it",
  );
}

async function setUp(ctx: ScenarioContext, key: string): Promise<{ streamId: string; webhookId: string }> {
  const stream = await ctx.call("POST", "/streams", { key, body: await streamBody(ctx) });
  expectStatus(stream, 201);
  const webhook = await ctx.call("POST", "/webhooks", {
    key,
    body: { url: "https://hooks.conformance.example/a", events: ["stream.ended"] },
  });
  expectStatus(webhook, 201);
  return { streamId: stream.body.stream_id, webhookId: webhook.body.webhook_id };
}

export const separationScenarios: Scenario[] = [
  {
    name: "test and live data are separate",
    tag: "behaviour",
    needs: ["operator"],
    async run(ctx) {
      const tenant = await ctx.tenant();
      const test = (await tenant.key({ environment: "test" })).key;
      const live = (await tenant.key({ environment: "live" })).key;
      const { streamId, webhookId } = await setUp(ctx, test);
      await expectInvisible(ctx, live, test, streamId, webhookId);
      const liveStream = await ctx.call("POST", "/streams", {
        key: live,
        body: await streamBody(ctx, { duration_minutes: 15 }),
      });
      expectError(await ctx.call("GET", `/streams/${liveStream.body.stream_id}`, { key: test }), 404, "not_found");
      for (const [key, id] of [
        [test, streamId],
        [live, liveStream.body.stream_id],
      ] as const) {
        const analytics = await ctx.call("GET", "/analytics", { key });
        expectEqual(
          analytics.body.streams.map((stream: { id: string }) => stream.id),
          [id],
          "streams in analytics",
        );
      }
    },
  },
  {
    name: "one brand cannot see or change another brand's data",
    tag: "behaviour",
    needs: ["operator"],
    async run(ctx) {
      const owner = await ctx.tenant();
      const other = await ctx.tenant();
      const ownerKey = (await owner.key()).key;
      const otherKey = (await other.key()).key;
      const { streamId, webhookId } = await setUp(ctx, ownerKey);
      await expectInvisible(ctx, otherKey, ownerKey, streamId, webhookId);
      expectEqual(
        (await ctx.call("GET", "/analytics", { key: otherKey })).body.brand_id,
        other.brandId,
        "brand_id in analytics",
      );
      expectEqual(
        (await ctx.call("GET", `/analytics?stream_id=${streamId}`, { key: otherKey })).body.total_streams,
        0,
        "total_streams of another brand's stream",
      );
    },
  },
];
